"""A Hugging Face ``transformers.Trainer`` callback that runs :class:`fctheory.torch.NCMonitor` on a causal
language model during ``Trainer.train`` (needs transformers: ``pip install 'fctheory[hf]'``; ``import
fctheory.torch`` never imports it).

The classes are the next tokens (K = the vocabulary, the rows of the output embeddings): the features are the
penultimate hidden states at every position t, the input of the model's output layer (``lm_head``), labelled by
the token at t + 1 (the batch's ``labels``, Hugging Face's causal-LM convention: the model shifts them itself,
and positions labelled −100, such as padding, are left out). :func:`fctheory.torch.lm.next_token_pairs` makes
the pairs. The design is that of the Lightning callback (:mod:`fctheory.torch.lightning`, whose helpers it
shares): one monitor epoch per training epoch, fed by the training forward passes of the epoch; the numbers of
each row are appended to ``trainer.state.log_history``; the table and the figure are written when training ends.
"""

from __future__ import annotations

import contextlib
import math

import transformers

from .._validate import Anything, Bool, Choice, Int, Real, fail, public, public_class
from ._callback import check_names, logged_numbers, submodule, weight_decay, write_outputs
from .lm import next_token_pairs
from .monitor import NCMonitor

__all__ = ["NCMonitorCallback"]


def _output_layer(model):
    """The model's output embeddings (the classifier W of the next token), or a refusal naming ``classifier``."""
    get = getattr(model, "get_output_embeddings", None)
    layer = get() if callable(get) else None
    if layer is None:
        fail("classifier", None, f"must be named: the {type(model).__name__} has no output embeddings")
    return layer


@public_class
class NCMonitorCallback(transformers.TrainerCallback):
    """Neural collapse of a causal language model's last hidden states, epoch by epoch, during ``Trainer.train``.

    Parameters
    ----------
    num_classes : int, optional
        K (≥ 2), the vocabulary; default: the rows of the classifier's weight. A token that never occurs as a next
        token in a monitored epoch (most of a real vocabulary) is absent: the epoch's metrics are over the tokens
        present (see :class:`fctheory.torch.NCMonitor`; the row's ``K_present``).
    lam_H : float
        The UFM's feature penalty (λ_H/2)‖H‖² (over all N next-token features, loss averaged over N).
    lam_W : float, optional
        Weight decay on the classifier W (the UFM's (λ_W/2)‖W‖²). Default: the ``weight_decay`` of the
        optimizer parameter group holding the classifier's weight, for an L2-coupled decay (SGD, Adam);
        AdamW's decoupled decay, the Trainer's default optimizer, is refused: pass ``lam_W`` then.
    classifier : str, optional
        Dotted name (as in ``named_modules()``) of the last layer (``.weight`` K × d, optional ``.bias``);
        default: ``model.get_output_embeddings()`` (GPT-2's ``lm_head``). It gives NC2/NC3 of W, NC4 and the
        distances of W.
    layer : str, optional
        Dotted name of the module whose output (B, T, d) is the feature (e.g. ``"transformer.ln_f"``); default:
        the classifier's input, the penultimate hidden states whatever the architecture.
    loss : {"ce", "mse"}
    lam_b : float
        Penalty on the bias (0: unregularised).
    labels : callable, optional
        ``labels(inputs)`` gives the (B, T) token labels of a batch from the model's keyword inputs; default
        ``inputs["labels"]``.
    ignore_index : int
        Label of the positions left out (−100, as Hugging Face's loss).
    out : str, optional
        Folder for ``nc_history.parquet``, ``nc_classes.parquet`` (the per-token values) and (``figure=True``)
        ``nc_history.png`` and ``nc_classes.png`` (per-token values against token frequency), written when
        training ends.
    figure : bool
        Also draw the figure (needs matplotlib).
    prefix : str
        Prefix of the logged keys (``"nc/nc1"``, ``"nc/dist_W_gram"``, …).
    progress : bool
        The monitor's own tqdm bar (off by default).
    every_n_epochs : int
        Monitor the training epochs 0, n, 2n, … only. Rows carry ``trainer_epoch``.
    sync : bool, optional
        Data-parallel training: combine the processes' moments (see :class:`NCMonitor`; None: whenever
        ``torch.distributed`` runs more than one process).

    Notes
    -----
    The monitor is built when training starts (``monitor`` attribute; ``table()`` gives its rows). Only forward
    passes of the model in training mode during a monitored epoch are counted (not evaluation or prediction).
    Each row's numbers are appended to ``state.log_history`` with the epoch and step (they reach
    ``trainer_state.json``; the reporting integrations see what ``Trainer.log`` sends, so call
    ``trainer.log(callback.logged)`` for them). With gradient accumulation every micro-batch is fed.
    """

    @public(
        num_classes=Int(min=2).or_none(),
        lam_H=Real(lo=0.0, lo_open=True),
        lam_W=Real(lo=0.0, lo_open=True).or_none(),
        classifier=Anything("a module name, checked in the body").or_none(),
        layer=Anything("a module name, checked in the body").or_none(),
        loss=Choice("ce", "mse"),
        lam_b=Real(lo=0.0),
        labels=Anything("a callable inputs -> labels").or_none(),
        ignore_index=Int(),
        out=Anything("a folder path, checked when written").or_none(),
        figure=Bool(),
        prefix=Anything("a str, checked in the body"),
        progress=Bool(),
        every_n_epochs=Int(min=1),
        sync=Bool().or_none(),
    )
    def __init__(
        self,
        num_classes: int | None = None,
        *,
        lam_H: float,
        lam_W: float | None = None,
        classifier: str | None = None,
        layer: str | None = None,
        loss: str = "ce",
        lam_b: float = 0.0,
        labels=None,
        ignore_index: int = -100,
        out=None,
        figure: bool = True,
        prefix: str = "nc/",
        progress: bool = False,
        every_n_epochs: int = 1,
        sync: bool | None = None,
    ):
        check_names(layer=layer, classifier=classifier, prefix=prefix)
        if labels is not None and not callable(labels):
            fail("labels", labels, "must be a callable inputs -> label tensor")
        super().__init__()
        self.num_classes, self.layer, self.classifier = num_classes, layer, classifier
        self.lam_H, self.lam_W, self.loss, self.lam_b = lam_H, lam_W, loss, lam_b
        self.labels, self.ignore_index = labels, ignore_index
        self.out, self.figure, self.prefix, self.progress = out, figure, prefix, progress
        self.every_n_epochs, self.sync = every_n_epochs, sync
        self.monitor: NCMonitor | None = None
        self.logged: dict = {}  # the last monitored epoch's logged numbers
        self._epoch = 0  # training epochs begun
        self._active = False  # this training epoch is monitored
        self._pending = None  # the labels of the forward pass under way
        self._hooks = contextlib.ExitStack()

    # ----------------------------------------------------------------- setup
    def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
        self._finish()
        fc = _output_layer(model) if self.classifier is None else submodule(model, self.classifier, "classifier")
        w = getattr(fc, "weight", None)
        lam_W = self.lam_W
        if lam_W is None:
            lam_W = weight_decay([] if optimizer is None else [optimizer], w)
        K = self.num_classes if self.num_classes is not None else int(getattr(w, "shape", (0,))[0])
        epochs = None if args.max_steps > 0 else math.ceil(args.num_train_epochs / self.every_n_epochs)
        self.monitor = NCMonitor(
            K,
            lam_W=lam_W,
            lam_H=self.lam_H,
            loss=self.loss,
            classifier=fc,
            lam_b=self.lam_b,
            total_epochs=epochs,
            progress=self.progress and state.is_world_process_zero,
            sync=self.sync,
        )
        self._epoch, self._active = 0, False
        hooks = self._hooks
        hooks.callback(model.register_forward_pre_hook(self._take_labels, with_kwargs=True).remove)
        hooks.callback(model.register_forward_hook(self._drop_labels, always_call=True).remove)
        if self.layer is None:
            hooks.callback(fc.register_forward_pre_hook(lambda _m, inputs: self._feed(inputs[0])).remove)
        else:
            feature = submodule(model, self.layer, "layer")
            hooks.callback(feature.register_forward_hook(lambda _m, _i, output: self._feed(output)).remove)

    def _take_labels(self, module, args, kwargs):
        if self._active and module.training:
            if self.labels is not None:
                self._pending = self.labels(kwargs)
            elif kwargs.get("labels") is not None:
                self._pending = kwargs["labels"]
            else:
                fail("labels", None, f"needed: the model's inputs have no 'labels' (keys {sorted(kwargs)})")

    def _drop_labels(self, *_):
        self._pending = None

    def _feed(self, hidden):
        if self._pending is None:
            return
        hidden = hidden[0] if isinstance(hidden, (tuple, list)) else hidden
        if hidden.ndim != 3:  # e.g. logits_to_keep: not the hidden states of every position
            fail(
                "layer", self.layer, f"must give (batch, positions, features) hidden states, got {tuple(hidden.shape)}"
            )
        self.monitor.update(*next_token_pairs(hidden, self._pending, ignore_index=self.ignore_index))

    # ----------------------------------------------------------------- epochs
    def on_epoch_begin(self, args, state, control, **kwargs):
        self._active = self._epoch % self.every_n_epochs == 0
        if self._active:
            self.monitor.begin_epoch()

    def on_epoch_end(self, args, state, control, **kwargs):
        epoch, self._epoch = self._epoch, self._epoch + 1
        if not self._active:
            return
        self._active = False
        row = self.monitor.end_epoch(trainer_epoch=epoch)
        self.logged = logged_numbers(row, self.prefix)
        state.log_history.append({**self.logged, "epoch": state.epoch, "step": state.global_step})

    # ----------------------------------------------------------------- outputs
    def on_train_end(self, args, state, control, **kwargs):
        self._finish()
        if state.is_world_process_zero:
            write_outputs(self.monitor, self.out, self.figure)

    def _finish(self):
        self._active, self._pending = False, None
        self._hooks.close()
        if self.monitor is not None:
            self.monitor.close()

    def table(self):
        """The monitor's table (pandas), one row per monitored training epoch (see :meth:`NCMonitor.table`)."""
        if self.monitor is None:
            fail("table", None, "no training has started yet")
        return self.monitor.table()
