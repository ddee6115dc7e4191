"""A neural-collapse monitor for a user's own PyTorch training loop.

Per epoch it accumulates, in one pass and on the features' device, the O(K·d + d²) class statistics
of the penultimate-layer features (counts, per-class sums and the pooled d×d second moment of the
features shifted per class; float32 features accumulate in float64), then computes from them alone
NC1–NC3, CDNV, class-mean norms and angles with the conventions of :mod:`fctheory.metrics` (through
:func:`fctheory.nc_diagnosis.statistics.nc_metrics`) and the distances to the regularised UFM optimum
of the network's (K, n, d, λ_W, λ_H, bias) from :mod:`fctheory.ufm`. Only the small K×d and d×d
statistics ever leave the device; the features are never stored.
"""

from __future__ import annotations

import contextlib
import math
import time

import numpy as np
import torch

from .._files import atomic_path
from .._threads import blas_threads
from .._validate import Anything, Bool, Choice, Int, PathOut, Real, fail, public, public_class
from ..metrics import pairs as _pairs
from . import _epoch
from ._moments import _HOST_DTYPES, _host_float64, _Moments
from .distributed import all_reduce_moments, sync_active
from .plots import plot_classes, plot_history

__all__ = ["NCMonitor"]


#: the layers (K·d entries of the class means) whose per-class values are computed when asked for, not each epoch
_DEFERRED_MAX = 2**16


def _reference_means(st, K):
    """(K × d class means of the statistics ``st``, the absent classes or None): an absent class's row is the mean
    of the present classes' means (a shift close to the data; NC4 never takes it as the nearest mean)."""
    means = np.asarray(st.means, dtype=np.float64)
    if st.K == K:
        return means, None
    ref = np.empty((K, means.shape[1]))
    ref[:] = means.sum(axis=0) / st.K
    ref[st.classes] = means
    absent = np.ones(K, dtype=bool)
    absent[st.classes] = False
    return ref, absent


class _Epoch:
    """The block of :meth:`NCMonitor.epoch`: begins an epoch, yields the dict of extras, ends the epoch."""

    __slots__ = ("_monitor", "_extra")

    def __init__(self, monitor):
        self._monitor, self._extra = monitor, {}

    def __enter__(self):
        self._monitor._begin_epoch()
        return self._extra

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self._monitor._end_epoch(self._extra)
        return False


class _Batch:
    """The block of :meth:`NCMonitor.batch`: the hooked layer's outputs in it are labelled ``labels``."""

    __slots__ = ("_monitor", "_labels")

    def __init__(self, monitor, labels):
        self._monitor, self._labels = monitor, labels

    def __enter__(self):
        self._monitor._pending = self._labels
        return self._monitor

    def __exit__(self, *exc):
        self._monitor._pending = None
        return False


# the features' dtypes that need no check beyond the shape (the common case costs one set lookup per batch)
_PLAIN_FEATURES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64})


def _as_tensor(name, x, *, labels=False):
    """``x`` as a detached tensor, refused clearly if it cannot be: (B, d) real features (more dimensions are
    flattened) or, with ``labels``, (B,) int64 labels. Torch tensors of the usual kinds pass with a few
    attribute tests (once per batch)."""
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(np.asarray(x))
        except (TypeError, ValueError, RuntimeError):
            fail(name, x, "must be a torch tensor or an array")
    if labels:
        if x.ndim == 1 and x.dtype is torch.int64:  # integers never require grad: nothing to detach
            return x
        if x.ndim != 1 or x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool:
            fail(name, f"tensor of shape {tuple(x.shape)} and dtype {x.dtype}", "must be a 1-D integer label tensor")
        return x.long()
    if x.ndim == 2 and x.dtype in _PLAIN_FEATURES:
        return x.detach()
    if x.dtype.is_complex or not (x.dtype.is_floating_point or x.dtype in (torch.int32, torch.int64)):
        fail(name, f"tensor of dtype {x.dtype}", "must hold real numbers")
    if x.ndim < 2:
        fail(name, f"tensor of shape {tuple(x.shape)}", "must be (batch, features) (more dimensions are flattened)")
    return x.detach().flatten(1)


@public_class
class NCMonitor:
    """Neural collapse of a network's penultimate layer, epoch by epoch, against the UFM optimum.

    Parameters
    ----------
    num_classes : int
        K (≥ 2); labels lie in {0, …, K−1}. A class may be absent from an epoch (no sample; most of a
        vocabulary in a language model's epoch): every metric is then computed over the classes present (at
        least 2; the row's ``K_present`` says how many), as if the absent ones were removed from K.
    lam_W : float
        Weight decay on the last layer W (the UFM's (λ_W/2)‖W‖²).
    lam_H : float
        The feature penalty of the UFM, (λ_H/2)‖H‖² over all N samples with the loss averaged over N.
    loss : {"ce", "mse"}
    classifier : torch.nn.Module, optional
        The last layer (``.weight`` K × d, optional ``.bias``): adds NC2/NC3 of W, NC4, the W Gram and
        norm distances. Its weights are read when an epoch ends (NC4: during the updates).
    bias : bool, optional
        Whether the last layer has a bias (default: read from ``classifier``; False without one).
    lam_b : float
        Penalty on the bias (0: unregularised, as in the closed forms).
    total_epochs : int, optional
        Length of the tqdm progress bar.
    progress : bool
        Show a tqdm progress bar (one step per epoch, the latest NC1 and distances as postfix).
    sync : bool, optional
        Data-parallel training (``torch.distributed``, e.g. DDP): combine every process's moments when an
        epoch ends, so that each process gets the statistics of the whole epoch's data (see
        :mod:`fctheory.torch.distributed`). None (default): exactly when ``torch.distributed`` is
        initialised with more than one process; False: this process's data only; True: as None, and an
        uninitialised ``torch.distributed`` is an error. Every process must then end each epoch; a process
        whose shard had no batch in an epoch takes part with zero moments (after the first epoch, or from the
        first one when ``classifier`` is given).
    process_group : optional
        The ``torch.distributed`` process group to combine over (default: the world).
    per_class : bool
        Also record each epoch's per-class values (:func:`fctheory.metrics.per_class`: variability, CDNV,
        norms, alignment of each present class, with the UFM optimum's per-class norms) for
        :meth:`class_table` and :meth:`plot_classes` (the plots against class frequency). For layers of up to
        K·d = 65,536 entries the epoch keeps its statistics and a copy of W and the values are computed when first
        asked for (out of the training loop); larger layers compute them as the epoch ends.

    Notes
    -----
    Usage: ``monitor.update(features, labels)`` for every batch of an epoch, or ``monitor.attach(layer)``
    (a forward hook on the penultimate layer) and ``with monitor.batch(labels): model(x)``; an epoch is
    ``with monitor.epoch() as extra: ...`` (put e.g. ``extra["loss"]`` in the dict) or
    :meth:`begin_epoch` / :meth:`end_epoch`. NC4 compares the classifier's decisions during the epoch
    with the nearest class mean of the *previous* epoch (one pass, no stored features): NaN in the
    first epoch, and equal to :func:`fctheory.metrics.nc4` when the features and the classifier did not
    change between the two epochs (e.g. an evaluation pass after training converged); a class absent from
    the previous epoch has no mean and is never the nearest one (the classifier still decides among all K).
    The UFM optimum the rows compare with is that of the present classes with the epoch's counts, against the
    classifier's rows of those classes.
    """

    #: CPU features go through the compiled kernels (fctheory.torch._kernels); False: through the tensor
    #: operations of the GPU path (the tests compare the two)
    _cpu_kernels = True

    @public(
        num_classes=Int(min=2),
        lam_W=Real(lo=0.0, lo_open=True),
        lam_H=Real(lo=0.0, lo_open=True),
        loss=Choice("ce", "mse"),
        classifier=Anything("a torch.nn.Module with .weight (and .bias)").or_none(),
        bias=Bool().or_none(),
        lam_b=Real(lo=0.0),
        total_epochs=Int(min=1).or_none(),
        progress=Bool(),
        sync=Bool().or_none(),
        process_group=Anything("a torch.distributed process group").or_none(),
        per_class=Bool(),
    )
    def __init__(
        self,
        num_classes: int,
        *,
        lam_W: float,
        lam_H: float,
        loss: str = "ce",
        classifier=None,
        bias: bool | None = None,
        lam_b: float = 0.0,
        total_epochs: int | None = None,
        progress: bool = True,
        sync: bool | None = None,
        process_group=None,
        per_class: bool = True,
    ):
        if classifier is not None:
            w = getattr(classifier, "weight", None)
            if not isinstance(w, torch.Tensor) or w.ndim != 2 or w.shape[0] != num_classes:
                fail(
                    "classifier",
                    type(classifier).__name__,
                    f"must have a .weight tensor of shape (K, d), K = {num_classes}",
                )
            has_b = getattr(classifier, "bias", None) is not None
            if bias is not None and bias != has_b:
                fail("bias", bias, f"contradicts the classifier, which {'has' if has_b else 'has no'} bias")
            bias = has_b
        self.K = num_classes
        self.lam_W, self.lam_H, self.loss, self.lam_b = lam_W, lam_H, loss, lam_b
        self.classifier = classifier
        self.bias = bool(bias)
        self.rows: list = []
        self.statistics = None  # the last epoch's FeatureStatistics
        self.applicability = None  # the last epoch's UFMApplicability (with the optimum)
        self._progress, self._total, self._bar = progress, total_epochs, None
        self._moments = None
        self._open = False
        # the last epoch's class means (NumPy float64, K × d; an absent class's row the mean of the present ones),
        # the next epoch's shifts and NC4 reference, with the absent classes (bool, K; None when none was)
        self._ref, self._ref_absent = None, None
        self._ref_device = None  # the device of its features
        self._pending = None
        self._handle = None
        self._seconds = 0.0
        self._t_epoch = None
        self._ufm = _epoch.UFMReference(loss=loss, K=num_classes, lam_W=lam_W, lam_H=lam_H, lam_b=lam_b, bias=self.bias)
        self.per_class = per_class
        # (epoch, per-class columns) of the monitored epochs; for small layers (K·d ≤ _DEFERRED_MAX) the columns are
        # computed when first asked for, from the epoch's statistics and a copy of W kept until then
        self._class_rows: list = []
        self._scratch: dict = {}  # the moments' per-batch buffers (see _Moments), kept from epoch to epoch
        self._spare = None  # the last ended epoch's CPU moments, zeroed and reused by the next epoch
        # NC4 off (first epoch, no classifier) as the CPU kernel takes it: empty arrays of the classifier's own
        # NumPy type (read as they are), so that the kernel's one compiled variant serves every epoch
        w = None if classifier is None else classifier.weight
        t = w.dtype if w is not None and w.dtype in _HOST_DTYPES else torch.float64
        t = torch.empty(0, dtype=t).numpy().dtype
        self._no_classifier = (np.empty((0, 0), dtype=t), np.empty(0, dtype=t))
        self.sync, self.process_group = sync, process_group

    # ----------------------------------------------------------------- feeding
    @public(features=Anything("a (B, d) tensor, checked in the body"), labels=Anything("a (B,) integer tensor"))
    def update(self, features, labels) -> "NCMonitor":
        """Add a batch: ``features`` (B, d) (more dimensions are flattened), ``labels`` (B,) in [0, K−1].

        Runs on the features' device in float64; non-finite features are refused when the epoch ends, not
        per batch (no transfer of them to the host). Starts an epoch if none is open; an empty batch is ignored.
        """
        self._add(features, labels)
        return self

    def _add(self, features, labels) -> None:
        # the body of update(), called directly by the hook: its checks are all here. Every tensor below is
        # detached (features, classifier) or created here, so no autograd graph is recorded without no_grad
        t0 = time.perf_counter()
        H = _as_tensor("features", features)
        y = _as_tensor("labels", labels, labels=True)
        if y.device != H.device:
            y = y.to(H.device)
        if y.shape[0] != H.shape[0]:
            fail(
                "labels",
                f"tensor of shape {tuple(y.shape)}",
                f"must have one label per row of features (B = {H.shape[0]})",
            )
        if not self._open:
            self._begin_epoch()
        m = self._moments
        if m is not None and m.sums.shape[1] != H.shape[1]:
            fail(
                "features",
                f"tensor of shape {tuple(H.shape)}",
                f"must have d = {m.sums.shape[1]} columns like the earlier batches",
            )
        if y.shape[0] == 0:
            return
        host = H.device.type == "cpu" and self._cpu_kernels
        counts = None if host else self._class_counts(y)  # the CPU kernel checks the labels itself
        if m is None:
            # the previous epoch's means (host float64): read as they are on the CPU, copied to another device
            ref = self._ref if (self._ref is not None and self._ref.shape[1] == H.shape[1]) else None
            absent = None if ref is None else self._ref_absent
            if ref is not None and not host:  # a tensor on the features' device
                ref = torch.as_tensor(ref, device=H.device)
            spare, self._spare = self._spare, None
            if spare is not None and host and spare.reusable(H.shape[1]):
                m = self._moments = spare.reset(ref, absent)
            else:
                m = self._moments = _Moments(
                    self.K, H.shape[1], H.device, ref, self._drop_epoch, self._scratch, host=host, absent=absent
                )
        clf = self.classifier
        W = b = None
        if clf is not None and m.ref is not None:  # NC4 (not in the first epoch): the classifier's weights
            W, b = clf.weight.detach(), clf.bias
            b = None if b is None else b.detach()
        if host:
            m.add_host(H, y, W, b, self._no_classifier)
        else:
            m.add(H, y, counts, W, b)
        self._seconds += time.perf_counter() - t0

    def _drop_epoch(self) -> None:
        """Forget the open epoch's moments and close it (its batches were refused): the next batch starts one."""
        self._moments, self._open = None, False
        self._seconds = 0.0

    def _class_counts(self, y):
        """bincount(y) with K bins; labels outside [0, K−1] are refused (a longer result, or bincount's error
        on negative values: on the CPU the valid path needs no other check; on a GPU torch's bincount itself
        reads the labels' extremes to the host)."""
        try:
            counts = torch.bincount(y, minlength=self.K)
        except RuntimeError:  # negative labels
            counts = None
        if counts is None or counts.shape[0] != self.K:
            lo, hi = int(y.min()), int(y.max())
            fail("labels", f"values {lo}..{hi}", f"must lie in [0, K-1] = [0, {self.K - 1}]")
        return counts

    @public(module=Anything("a torch.nn.Module, checked in the body"))
    def attach(self, module) -> "NCMonitor":
        """Register a forward hook on ``module`` (the penultimate layer): its output is fed to
        :meth:`update` with the labels of the enclosing :meth:`batch` block (outputs produced outside
        such a block are ignored)."""
        if not isinstance(module, torch.nn.Module):
            fail("module", type(module).__name__, "must be a torch.nn.Module")
        self.detach()

        def hook(_mod, _inputs, output):
            if self._pending is not None:
                self._add(output[0] if isinstance(output, (tuple, list)) else output, self._pending)

        self._handle = module.register_forward_hook(hook)
        return self

    @public()
    def detach(self) -> None:
        """Remove the forward hook (if any)."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def batch(self, labels) -> "_Batch":
        """``with monitor.batch(y): model(x)``: the hooked layer's output in this block is labelled ``y``.

        The labels are checked by :meth:`update` when the hooked layer runs (where a bad value is refused
        naming ``labels``); entering and leaving the block only sets and clears them.
        """
        return _Batch(self, labels)

    # declared like the @public methods, without their wrapper: the block is entered once per batch, and the
    # labels (any object) are checked where the hooked layer feeds them to update()
    batch.__fc_params__ = {"labels": Anything("(B,) integer labels, checked by update")}

    # ----------------------------------------------------------------- epochs
    @public()
    def begin_epoch(self) -> None:
        """Start a new epoch (forgets the moments of an epoch that was not ended)."""
        self._begin_epoch()

    def _begin_epoch(self) -> None:
        self._moments = None  # allocated on the first batch, on its device
        self._open = True
        self._t_epoch = time.perf_counter()

    def epoch(self) -> "_Epoch":
        """``with monitor.epoch() as extra:`` one epoch; the dict ``extra`` (e.g. the loss) joins its row.

        An exception inside the block leaves the epoch open (not recorded); the next epoch starts afresh.
        """
        return _Epoch(self)

    # declared like the @public methods, without their wrapper (no parameter): entered once per epoch
    epoch.__fc_params__ = {}

    @public()
    def end_epoch(self, **extra) -> dict:
        """Close the epoch: metrics and UFM distances from its statistics; returns (and records) its row.

        Keyword arguments (numbers such as the training loss) are added to the row.
        """
        return self._end_epoch(extra)

    def _end_epoch(self, extra) -> dict:
        t0 = time.perf_counter()
        m = self._moments
        syncing = sync_active(self.sync, self.process_group)
        if m is None and syncing:
            # a process whose shard had no batch this epoch still joins the collective calls (the others would
            # wait in them forever), with zero moments of the known width
            m = self._moments = self._empty_moments()
        if m is None:
            fail("update", None, "no batch was added in this epoch (call update() or run the hooked model)")
        m.check_finite()
        if syncing:  # data-parallel: the whole epoch's moments, on every rank
            have = None if m.ref is not None else m.have
            m.counts, m.sums, m.scatter, m.sq, m.shift, m.disagree = all_reduce_moments(
                m.counts, m.sums, m.scatter, m.sq, m.shift, have, m.disagree, self.process_group
            )
        # K×d and d×d work: threaded BLAS would spend more time waking threads than computing. The products
        # here have at most K·d·max(K, d) multiply-adds; up to 2^16 (OpenBLAS runs GEMMs of up to 2^18 on
        # one thread) small layers skip the limit, whose setting and restoring cost more than their metrics
        d = m.sums.shape[1]
        # From pairs.LARGE_K classes on, the tiles' products are large GEMMs: BLAS keeps its threads there
        single = self.K * d * max(self.K, d) > 2**16 and self.K < _pairs.LARGE_K
        with blas_threads(1) if single else contextlib.nullcontext():
            row = self._row(m)
        if row.get("K_present", 0) >= 2:  # the next epoch's shifts and NC4 reference: this epoch's class means
            self._ref, self._ref_absent = _reference_means(self.statistics, self.K)
            self._ref_device = m.sums.device
        self._moments, self._open = None, False
        self._spare = m if m.host else None
        self._seconds += time.perf_counter() - t0
        row["monitor_seconds"] = self._seconds
        row["epoch_seconds"] = time.perf_counter() - self._t_epoch
        self._seconds = 0.0
        row.update(extra)
        self.rows.append(row)
        self._show(row)
        return row

    def _empty_moments(self):
        """Zero moments for a process without a batch: the width and device of the previous epoch's means, else
        of the classifier's weight; None when neither is known (the first epoch of a monitor without one)."""
        if self._ref is not None:
            host = self._ref_device.type == "cpu" and self._cpu_kernels
            ref = self._ref if host else torch.as_tensor(self._ref, device=self._ref_device)
            return _Moments(self.K, self._ref.shape[1], self._ref_device, ref, host=host, absent=self._ref_absent)
        if self.classifier is not None:
            w = self.classifier.weight
            return _Moments(self.K, w.shape[1], w.device, None, host=w.device.type == "cpu" and self._cpu_kernels)
        return None

    def _row(self, m) -> dict:
        W = b = None
        if self.classifier is not None:
            W = _host_float64(self.classifier.weight)
            if self.bias:
                b = _host_float64(self.classifier.bias)
        counts, got = _epoch.numbers(m, W, b, self._ufm)
        N, K_present = int(counts.sum()), int(np.count_nonzero(counts))
        row = {"epoch": len(self.rows), "N": N, "K_present": K_present}
        if got is None:  # fewer than 2 classes present: nothing is defined, the epoch is still recorded
            return row
        st, summary, distances, cmp = got
        row.update(summary)
        if W is not None:
            row["nc4"] = int(m.disagree) / N if m.ref is not None else math.nan
        row.update(distances)
        row["ufm_applies"] = cmp.app.applies
        self.statistics, self.applicability = st, cmp.app
        if self.per_class:
            if st.K * st.d <= _DEFERRED_MAX:  # a few hundred µs of array calls: not in the training loop
                self._class_rows.append((row["epoch"], (st, None if W is None else W.copy(), cmp)))
            else:
                self._class_rows.append((row["epoch"], _epoch.class_values(st, W, cmp)))
        return row

    def _show(self, row):
        if not self._progress:
            return
        if self._bar is None:
            from tqdm.auto import tqdm  # noqa: PLC0415 - the progress display is optional

            self._bar = tqdm(total=self._total, desc="NC monitor", unit="epoch")
        post = {"NC1": f"{row['nc1']:.3g}", "NC2": f"{row['nc2']:.3g}"}
        if "dist_W_gram" in row:
            post["W-Gram dist"] = f"{row['dist_W_gram']:.3g}"
        self._bar.set_postfix(post, refresh=False)
        self._bar.update(1)

    @public()
    def close(self) -> None:
        """Close the progress bar and remove the hook."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self.detach()

    # ----------------------------------------------------------------- outputs
    @public()
    def table(self):
        """pandas DataFrame, one row per epoch (metrics, distances, UFM predictions, the extras)."""
        try:
            import pandas as pd  # noqa: PLC0415 - optional dependency
        except ImportError:  # pragma: no cover - depends on the install
            fail("table", "pandas", "needs pandas (pip install pandas)")
        return pd.DataFrame(self.rows)

    @public(path=PathOut())
    def save(self, path) -> str:
        """Write the table as Parquet (pyarrow) at ``path``, atomically; returns the path."""
        df = self.table()
        with atomic_path(path, name="path") as tmp:
            df.to_parquet(tmp, engine="pyarrow", index=False)
        return path

    @public(path=PathOut())
    def plot(self, path) -> str:
        """Each metric over the epochs, the UFM prediction as a line (see :func:`fctheory.torch.plot_history`)."""
        if not self.rows:
            fail("path", path, "nothing to plot: no epoch has ended yet")
        return plot_history(
            self.table(),
            path,
            title=f"K = {self.K}, λ_W = {self.lam_W:g}, λ_H = {self.lam_H:g}, "
            f"{self.loss}{' + bias' if self.bias else ''}",
        )

    @public()
    def class_table(self):
        """pandas DataFrame of the per-class values, one row per (epoch, class present): ``epoch``, ``class``,
        ``count``, ``frequency``, ``var``, ``var_rel``, ``cdnv``, ``mean_norm``, ``centred_norm``, with a
        classifier ``w_norm`` and ``w_cos`` (see :class:`fctheory.metrics.PerClass`), and the UFM optimum's
        ``ufm_mean_norm`` (and ``ufm_w_norm``). Empty without ``per_class``."""
        try:
            import pandas as pd  # noqa: PLC0415 - optional dependency
        except ImportError:  # pragma: no cover - depends on the install
            fail("class_table", "pandas", "needs pandas (pip install pandas)")
        frames = [pd.DataFrame({"epoch": epoch, **cols}) for epoch, cols in self._class_columns()]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["epoch", "class"])

    def _class_columns(self) -> list:
        """The (epoch, per-class columns) of the recorded epochs, the deferred ones computed now (once)."""
        rows = self._class_rows
        for i, (epoch, cols) in enumerate(rows):
            if isinstance(cols, tuple):
                rows[i] = (epoch, _epoch.class_values(*cols))
        return rows

    @public(path=PathOut())
    def save_classes(self, path) -> str:
        """Write :meth:`class_table` as Parquet (pyarrow) at ``path``, atomically; returns the path."""
        df = self.class_table()
        with atomic_path(path, name="path") as tmp:
            df.to_parquet(tmp, engine="pyarrow", index=False)
        return path

    @public(path=PathOut(), epochs=Anything("epoch numbers (ints) or None").or_none())
    def plot_classes(self, path, *, epochs=None) -> str:
        """Per-class values against class frequency, one point per class (see :func:`fctheory.torch.plot_classes`):
        the first and last recorded epochs, or the ``epochs`` given."""
        if not self._class_rows:
            fail("path", path, "nothing to plot: no epoch with per-class values has ended yet")
        df = self.class_table()
        return plot_classes(
            df,
            path,
            epochs=epochs,
            title=f"K = {self.K}, λ_W = {self.lam_W:g}, λ_H = {self.lam_H:g}, {self.loss}",
        )
