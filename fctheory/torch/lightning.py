"""A PyTorch Lightning callback that runs :class:`fctheory.torch.NCMonitor` during ``Trainer.fit``
(needs Lightning: ``pip install 'fctheory[lightning]'``; ``import fctheory.torch`` never imports it).

The callback hooks the monitor to a named penultimate module of the LightningModule (or reads the
features from what ``training_step`` returns), opens and closes one monitor epoch per training epoch,
logs the epoch's metrics through ``pl_module.log_dict`` (so they reach the trainer's logger and
``trainer.callback_metrics``) and writes the table and the figure when fitting ends. The features are
those of the training forward passes of the epoch (the network changes during the epoch; for the
features of a fixed network run a separate pass with :class:`NCMonitor`, as the digits tutorial does).
"""

from __future__ import annotations

import contextlib

import lightning.pytorch as pl

from .._validate import Anything, Bool, Choice, Int, Real, fail, public, public_class
from ._callback import check_names, logged_numbers, submodule, weight_decay, write_outputs
from .distributed import sync_active
from .monitor import NCMonitor

__all__ = ["NCMonitorCallback"]


@public_class
class NCMonitorCallback(pl.Callback):
    """Neural collapse of a LightningModule's penultimate layer, epoch by epoch, during ``Trainer.fit``.

    Parameters
    ----------
    num_classes : int
        K (≥ 2). A class absent from a training epoch is left out of that epoch's metrics (see
        :class:`NCMonitor`: every metric over the classes present; the row's ``K_present``).
    layer : str, optional
        Dotted name (as in ``named_modules()``) of the penultimate module, whose output is the feature
        vector; a forward hook feeds it, with the labels of the current training batch, to the monitor.
        Without ``layer``, ``training_step`` must return a dict with the batch's features under
        ``"features"``.
    lam_H : float
        The UFM's feature penalty (λ_H/2)‖H‖² (over all N training samples, loss averaged over N).
    lam_W : float, optional
        Weight decay on the last layer W (the UFM's (λ_W/2)‖W‖²). Default: the ``weight_decay`` of the
        optimizer parameter group holding ``classifier``'s weight (an L2-coupled decay: SGD, Adam; AdamW's
        decoupled decay is refused).
    classifier : str, optional
        Dotted name of the last layer (``.weight`` K × d, optional ``.bias``): adds NC2/NC3 of W, NC4 and
        the distances of W; needed to read ``lam_W`` from the optimizer.
    loss : {"ce", "mse"}
    lam_b : float
        Penalty on the bias (0: unregularised).
    labels : callable, optional
        ``labels(batch)`` gives the batch's label tensor; default ``batch[1]`` (an ``(x, y)`` batch) or
        the first of ``batch["y"]``, ``["labels"]``, ``["label"]``, ``["target"]`` for a dict batch.
    out : str, optional
        Folder for ``nc_history.parquet``, ``nc_classes.parquet`` (the per-class values) and (``figure=True``)
        ``nc_history.png`` and ``nc_classes.png`` (per-class values against class frequency), written when
        fitting ends.
    figure : bool
        Also draw the figure (needs matplotlib).
    prefix : str
        Prefix of the logged keys (``"nc/nc1"``, ``"nc/dist_W_gram"``, …).
    progress : bool
        The monitor's own tqdm bar (Lightning's bar shows the logged metrics with ``prog_bar``; off by default).
    every_n_epochs : int
        Monitor the training epochs 0, n, 2n, … only (the monitor's cost is per monitored epoch; NC4 then
        compares with the class means of the previous *monitored* epoch). Rows carry ``trainer_epoch``.
    sync : bool, optional
        Data-parallel training (``strategy="ddp"`` and its kin): combine the processes' moments so that
        every process's table is that of the whole epoch's data (None: whenever ``torch.distributed`` runs
        more than one process; False: each process monitors its own shard). See :class:`NCMonitor`.

    Notes
    -----
    The monitor is built when training starts (``monitor`` attribute; ``table()`` gives its rows). The
    hook sees every forward of ``layer`` between a training batch's start and end: a ``training_step``
    that runs the layer twice feeds the batch twice. Validation and sanity-check passes are not counted.
    Under data-parallel training every process monitors the whole epoch (see ``sync``) and logs the same
    values; only the global-zero process shows the monitor's progress bar and writes the files.
    """

    @public(
        num_classes=Anything("an int >= 2, checked by NCMonitor"),
        layer=Anything("a module name, checked in the body").or_none(),
        lam_H=Real(lo=0.0, lo_open=True),
        lam_W=Real(lo=0.0, lo_open=True).or_none(),
        classifier=Anything("a module name, checked in the body").or_none(),
        loss=Choice("ce", "mse"),
        lam_b=Real(lo=0.0),
        labels=Anything("a callable batch -> labels").or_none(),
        out=Anything("a folder path, checked when written").or_none(),
        figure=Bool(),
        prefix=Anything("a str, checked in the body"),
        progress=Bool(),
        every_n_epochs=Int(min=1),
        sync=Bool().or_none(),
    )
    def __init__(
        self,
        num_classes: int,
        *,
        layer: str | None = None,
        lam_H: float,
        lam_W: float | None = None,
        classifier: str | None = None,
        loss: str = "ce",
        lam_b: float = 0.0,
        labels=None,
        out=None,
        figure: bool = True,
        prefix: str = "nc/",
        progress: bool = False,
        every_n_epochs: int = 1,
        sync: bool | None = None,
    ):
        check_names(layer=layer, classifier=classifier, prefix=prefix)
        if lam_W is None and classifier is None:
            fail("lam_W", None, "must be given when there is no classifier to read it from the optimizer")
        if labels is not None and not callable(labels):
            fail("labels", labels, "must be a callable batch -> label tensor")
        super().__init__()
        self.num_classes, self.layer, self.classifier = num_classes, layer, classifier
        self.lam_H, self.lam_W, self.loss, self.lam_b = lam_H, lam_W, loss, lam_b
        self.labels, self.out, self.figure, self.prefix, self.progress = labels, out, figure, prefix, progress
        self.every_n_epochs, self.sync = every_n_epochs, sync
        self.monitor: NCMonitor | None = None
        self._active = False  # this training epoch is monitored
        self._batch = contextlib.ExitStack()

    # ----------------------------------------------------------------- setup
    def on_train_start(self, trainer, pl_module):
        fc = None if self.classifier is None else submodule(pl_module, self.classifier, "classifier")
        lam_W = self.lam_W
        if lam_W is None:
            lam_W = weight_decay(trainer.optimizers, getattr(fc, "weight", None))
        self.monitor = NCMonitor(
            self.num_classes,
            lam_W=lam_W,
            lam_H=self.lam_H,
            loss=self.loss,
            classifier=fc,
            lam_b=self.lam_b,
            total_epochs=-(-trainer.max_epochs // self.every_n_epochs) if (trainer.max_epochs or -1) > 0 else None,
            progress=self.progress and trainer.is_global_zero,
            sync=self.sync,
        )
        if self.layer is not None:
            self.monitor.attach(submodule(pl_module, self.layer, "layer"))

    def _batch_labels(self, batch):
        if self.labels is not None:
            return self.labels(batch)
        if isinstance(batch, dict):
            for key in ("y", "labels", "label", "target"):
                if key in batch:
                    return batch[key]
            fail("labels", None, f"needed: the batch is a dict without 'y'/'labels' (keys {sorted(batch)})")
        if isinstance(batch, (tuple, list)) and len(batch) >= 2:
            return batch[1]
        fail("labels", None, "needed: the batch is not an (x, y) pair; pass labels=lambda batch: ...")

    # ----------------------------------------------------------------- per batch and epoch
    def on_train_epoch_start(self, trainer, pl_module):
        self._active = trainer.current_epoch % self.every_n_epochs == 0
        if self._active:
            self.monitor.begin_epoch()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self._active and self.layer is not None:
            self._batch.enter_context(self.monitor.batch(self._batch_labels(batch)))

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._batch.close()
        if self._active and self.layer is None:
            if not isinstance(outputs, dict) or "features" not in outputs:
                fail("layer", None, "needed unless training_step returns a dict with the batch's 'features'")
            self.monitor.update(outputs["features"], self._batch_labels(batch))

    def on_train_epoch_end(self, trainer, pl_module):
        if not self._active:
            return
        self._active = False
        row = self.monitor.end_epoch(trainer_epoch=trainer.current_epoch)
        logged = logged_numbers(row, self.prefix)
        # combined moments give the same values on every process: Lightning's mean over them changes nothing
        # (and it warns about epoch-level values logged unsynchronised in a distributed run)
        synced = sync_active(self.sync)
        pl_module.log_dict(logged, on_step=False, on_epoch=True, logger=True, sync_dist=synced)

    # ----------------------------------------------------------------- outputs
    def on_fit_end(self, trainer, pl_module):
        self._finish()
        if trainer.is_global_zero:
            write_outputs(self.monitor, self.out, self.figure)

    def on_exception(self, trainer, pl_module, exception):
        self._finish()

    def _finish(self):
        self._batch.close()
        if self.monitor is not None:
            self.monitor.close()

    def table(self):
        """The monitor's table (pandas), one row per training epoch (see :meth:`NCMonitor.table`)."""
        if self.monitor is None:
            fail("table", None, "no training has started yet")
        return self.monitor.table()
