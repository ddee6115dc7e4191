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
from .._nc_kernels import KEYS as SUMMARY_KEYS
from .._nc_kernels import JACOBI_MAX_K, epoch_numbers
from ..metrics import ClassStatistics, class_statistics_from_moments, nc_summary_from_moments
from ..metrics.summary import nc_summary_and_frames
from ..metrics import pairs as _pairs
from ..ufm.gram import gram_distance_from_fit
from ..nc_diagnosis import applicable_result, ufm_distances
from ..nc_diagnosis.statistics import distances_from_kernel_norms
from . import _kernels
from .distributed import all_reduce_moments, sync_active
from .plots import plot_history

__all__ = ["NCMonitor"]

# from d = 2·_BLOCK on, the d×d scatter is accumulated by row blocks against the columns right of their
# diagonal: fewer flops than the full product, in products still large enough for BLAS to run at speed
_BLOCK = 128
# on the CPU the scatter's upper triangle is summed by the compiled kernel up to this width (1.7× faster than
# torch's product on one thread at d = 64 to 128, 1.2× at 256); from about d = 512 on torch's blocked BLAS
# products are as fast, and threaded as the user set torch's threads
_HOST_SCATTER_MAX_D = 256
# the features' dtypes the CPU kernels read as they are (others are first copied into a float64 buffer)
_HOST_DTYPES = (torch.float32, torch.float64)
_NO_BIAS = np.empty(0)


class _Moments:
    """One epoch's moments of the per-class shifted features on one device (see statistics_from_moments)."""

    def __init__(self, K, d, device, ref_means, drop=None, scratch=None, host=None):
        f64 = dict(dtype=torch.float64, device=device)
        # per batch shape, the (B, d) float64 features and shifted features (and a view of the latter's
        # transpose), reused from batch to batch and from epoch to epoch (the monitor passes its own dict):
        # fresh ones cost an allocation each
        self.scratch = {} if scratch is None else scratch
        self.counts = torch.zeros(K, dtype=torch.int64, device=device)
        self.sums = torch.zeros(K, d, **f64)
        self.scatter = torch.zeros(d, d, **f64)
        self.sq = torch.zeros(K, **f64)
        self.shift = torch.zeros(K, d, **f64)
        self.disagree = torch.zeros((), dtype=torch.int64, device=device)
        self.blocks = None if d < 2 * _BLOCK else range(0, d, _BLOCK)  # row blocks of the scatter's upper part
        self.drop = drop  # called when check_finite refuses the epoch (the monitor forgets it), or None
        # on the CPU the per-batch work is done by compiled kernels (fctheory.torch._kernels) on NumPy views of
        # these tensors (shared memory: the tensors, which the distributed path reduces, see every batch); the
        # scatter then holds its upper triangle only, like the blocked GPU path
        self.host = torch.device(device).type == "cpu" if host is None else host
        self.upper = self.host or self.blocks is not None
        if self.host:
            self.arrays = tuple(t.numpy() for t in (self.counts, self.sums, self.scatter, self.sq, self.shift))
            self.disagree_view = self.disagree.view(1).numpy()
            self.have = torch.zeros(K, dtype=torch.bool)  # a tensor for the distributed path, written by its view
            self.have_view = self.have.numpy()
            self.mu2, self.mu_offset = np.empty((K, d)), np.empty(K)
            self._set_ref(ref_means)
            return
        self.ref = ref_means  # the previous epoch's class means (shift and NC4 reference), or None
        # shift each class by a point close to its mean so that S − Σ s sᵀ/n does not cancel: the previous
        # epoch's mean, else (first epoch) the class's first sample, set as the class first appears
        self.complete = ref_means is not None  # every class has its shift
        self.nc4 = None
        if ref_means is None:
            self.have = torch.zeros(K, dtype=torch.bool, device=device)
        else:
            self.shift.copy_(ref_means)
            # NC4's product: rows [W; 2μ] and offsets [b (0 without a bias); −‖μ‖²] (W and b set per batch).
            # The views are made once: the rows and offsets of the classifier, the product's right factor,
            # and the (B, 2, K) shape of its scores
            w = torch.cat([torch.zeros_like(ref_means), 2.0 * ref_means])
            offset = torch.cat([torch.zeros(K, **f64), -(ref_means * ref_means).sum(dim=1)])
            self.nc4 = (w[:K], offset[:K], offset, w.T, (-1, 2, K))

    def _set_ref(self, mu):
        """CPU: the shifts and NC4's reference from the previous epoch's means ``mu`` (NumPy float64) or None."""
        self.ref = mu
        shift = self.arrays[4]
        if mu is None:
            shift.fill(0.0)
            self.have_view.fill(False)
        else:
            shift[...] = mu
            self.have_view.fill(True)
            np.multiply(mu, 2.0, out=self.mu2)
            np.einsum("kd,kd->k", mu, mu, out=self.mu_offset)
            np.negative(self.mu_offset, out=self.mu_offset)

    def reusable(self, d) -> bool:
        """Whether this epoch's CPU moments can serve the next epoch (:meth:`reset`): same width, and its
        tensors still the ones the views see (a distributed reduction replaces them)."""
        return (
            self.host
            and self.sums.shape[1] == d
            and self.sums.data_ptr() == self.arrays[1].ctypes.data
            and self.scatter.data_ptr() == self.arrays[2].ctypes.data
        )

    def reset(self, ref_means) -> "_Moments":
        """Zero the CPU moments for a new epoch shifted by ``ref_means`` (allocating nothing)."""
        for a in self.arrays[:4]:
            a.fill(0)
        self.disagree_view[0] = 0
        self._set_ref(ref_means)
        return self

    def add_host(self, H, y, W, b, empty):
        """Add a batch on the CPU: features ``H`` (detached), labels ``y`` (checked here), optionally the
        classifier's current (W, b) for NC4 (``empty``: empty arrays of their NumPy type, for an epoch without
        NC4). Labels outside [0, K−1] are refused before anything is added."""
        yn = y.numpy()
        if H.dtype not in _HOST_DTYPES:  # e.g. half precision: copied into a reused float64 buffer
            key = (H.shape, H.device)
            buf = self.scratch.get(key)
            if buf is None:
                buf = self._scratch(key)
            H = buf[0].copy_(H)
        # NC4 needs the classifier's weights and the previous epoch's means. Its absence is an empty array of the
        # weights' own type (``empty``): one compiled variant of the kernel serves the epochs with and without NC4
        Wn, bn = empty
        if W is not None and self.ref is not None:
            Wn, bn = _host_view(W), (bn if b is None else _host_view(b))
        counts, sums, scatter, sq, shift = self.arrays
        small = H.shape[1] <= _HOST_SCATTER_MAX_D
        Dt, disagree = _kernels.add_batch(
            H.numpy(), yn, shift, self.have_view, counts, sums, sq, scatter, small, Wn, bn, self.mu2, self.mu_offset
        )
        if disagree < 0:  # nothing was added
            K = self.counts.shape[0]
            fail("labels", f"values {int(yn.min())}..{int(yn.max())}", f"must lie in [0, K-1] = [0, {K - 1}]")
        self.disagree_view[0] += disagree
        if not small:  # torch's BLAS products on the shifted rows (d × B), the upper block triangle only
            Dt = torch.from_numpy(Dt)
            for lo in self.blocks:
                self.scatter[lo : lo + _BLOCK, lo:].addmm_(Dt[lo : lo + _BLOCK], Dt[lo:].T)

    def add(self, H, y, counts, W=None, b=None):
        """Add a batch: real features ``H`` (detached), labels ``y`` and their class counts (``bincount(y)``)."""
        key = (H.shape, H.device)
        buf = self.scratch.get(key)
        if buf is None:
            buf = self._scratch(key)
        if H.dtype is not torch.float64:
            H = buf[0].copy_(H)
        if not self.complete:
            self._shift_new_classes(H, y, counts)
        D = torch.sub(H, self.shift.index_select(0, y), out=buf[1])
        self.counts += counts
        self.sums.index_add_(0, y, D)
        self.sq.index_add_(0, y, torch.linalg.vecdot(D, D))  # Σ_j D_ij², as (D * D).sum(1) in one call
        if self.blocks is None:
            self.scatter.addmm_(buf[2], D)  # buf[2] is Dᵀ, a view made with the buffer
        else:  # the upper block triangle only (DᵀD is symmetric): 5/8 of the flops at d = 512
            for lo in self.blocks:
                self.scatter[lo : lo + _BLOCK, lo:].addmm_(D[:, lo : lo + _BLOCK].T, D[:, lo:])
        if W is not None and self.nc4 is not None:
            # one product and one argmax for both decisions: the logits h·W + b and 2⟨h, μ_c⟩ − ‖μ_c‖², minus the
            # squared distance to the previous epoch's means up to ‖h‖² (×2 and the negation are exact, and
            # argmax takes the first of tied maxima as argmin does of minima). The classifier's current
            # weights are copied (in float64, on this device) into the first K rows.
            w_top, b_top, offset, wT, shape = self.nc4
            w_top.copy_(W)
            if b is not None:
                b_top.copy_(b)
            decide = torch.addmm(offset, H, wT).view(shape).argmax(dim=2)
            # the two decisions differ iff their difference is non-zero: one kernel fewer than != and sum
            self.disagree += torch.count_nonzero(torch.sub(*decide.unbind(1)))

    def _scratch(self, key):
        """The buffers of a new (batch shape, device): kept for the few shapes last seen (a training's batches
        usually come in one or two sizes)."""
        if len(self.scratch) >= 4:
            self.scratch.clear()
        shape, device = key
        # normal tensors even when made under torch.inference_mode: they are written in later epochs, perhaps
        # outside it (a normal tensor may be written inside it, an inference tensor never outside)
        with torch.inference_mode(False):
            # the features in float64 and the shifted rows (the CPU kernels use the first only, for other dtypes)
            H, D = (torch.empty(shape, dtype=torch.float64, device=device) for _ in range(2))
        buf = self.scratch[key] = (H, D, D.T)
        return buf

    def _shift_new_classes(self, H, y, counts):
        """First epoch: a class seen for the first time is shifted by its first sample."""
        new = (counts > 0) & ~self.have
        if not bool(new.any()):
            return
        K = self.have.shape[0]
        first = torch.full((K,), y.shape[0], dtype=torch.int64, device=y.device)
        first.scatter_reduce_(0, y, torch.arange(y.shape[0], device=y.device), reduce="amin")
        self.shift[new] = H[first[new]]
        self.have |= new
        # once every class has its shift the per-batch bookkeeping stops (one check per batch until then)
        self.complete = bool(self.have.all())

    def check_finite(self):
        """Refuse the epoch if a batch had non-finite entries, or entries whose squares overflow float64.

        Checked once per epoch instead of per batch (a host synchronisation on a GPU), on one scalar: such an
        entry makes its class's Σ_i ‖D_i‖² (squares, never cancelled) and so their sum infinite or NaN, and a
        finite sum bounds every other moment (the scatter's diagonal sums to it, |Σ_i D_ij| ≤ √(n·Σ_i D_ij²)).
        The monitor then forgets the epoch (``drop``), so that the next one starts afresh.
        """
        # the ufunc's reduce: the same sum as ndarray.sum without its Python wrapper
        if math.isfinite(np.add.reduce(self.sq.numpy()) if self.host else float(self.sq.sum())):
            return
        if self.drop is not None:
            self.drop()
        fail(
            "features",
            "a batch of this epoch with non-finite entries (or entries whose squares overflow float64)",
            "must be finite; the epoch's moments are dropped",
        )

    def host_moments(self):
        """CPU: NumPy views of the moments (counts, sums, scatter, sq, shift) as they stand now (a distributed
        reduction replaces the tensors, so the views are taken afresh)."""
        return tuple(t.numpy() for t in (self.counts, self.sums, self.scatter, self.sq, self.shift))

    def summary(self, W=None):
        """(statistics, NC metrics) of the epoch's moments; ``W`` the classifier (NumPy float64) or None."""
        counts, sums, scatter, sq, shift = self.on_host()
        # the moments are the monitor's own well-formed arrays: the body of the public function, without
        # its argument checks (which copy every array; the body checks shapes, counts and finiteness itself)
        return nc_summary_from_moments.__wrapped__(counts, sums, scatter, sq, shift, W, upper=self.upper)

    def on_host(self):
        """The five moments as NumPy arrays (views on the CPU; one transfer from another device)."""
        # one transfer to the host (one synchronisation on a GPU) for the five moments: the counts ride along
        # as float64, exact below 2^53
        if self.host:  # already there: views, no copy
            counts, sums, scatter, sq, shift = self.host_moments()
        else:
            moments = (self.counts.to(torch.float64), self.sums, self.scatter, self.sq, self.shift)
            host = torch.cat([t.ravel() for t in moments]).cpu().numpy()
            counts, sums, scatter, sq, shift = (
                part.reshape(t.shape)
                for part, t in zip(np.split(host, np.cumsum([t.numel() for t in moments])[:-1]), moments)
            )
            counts = counts.astype(np.int64)
        return counts, sums, scatter, sq, shift


def _host_view(t):
    """A detached tensor as a NumPy array the kernels read: a view of a CPU float32/float64 tensor, else a float64
    copy."""
    if t.device.type == "cpu" and t.dtype in _HOST_DTYPES:
        return t.numpy()
    return t.to(device="cpu", dtype=torch.float64).numpy()


def _host_float64(t):
    """A parameter's values as a float64 NumPy array (a view of a CPU float64 one: read at once, never kept)."""
    return np.asarray(_host_view(t.detach()), dtype=np.float64)


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
        K (≥ 2); labels lie in {0, …, K−1} and every class must be seen in each epoch.
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

    Notes
    -----
    Usage: ``monitor.update(features, labels)`` for every batch of an epoch, or ``monitor.attach(layer)``
    (a forward hook on the penultimate layer) and ``with monitor.batch(labels): model(x)``; an epoch is
    ``with monitor.epoch() as extra: ...`` (put e.g. ``extra["loss"]`` in the dict) or
    :meth:`begin_epoch` / :meth:`end_epoch`. NC4 compares the classifier's decisions during the epoch
    with the nearest class mean of the *previous* epoch (one pass, no stored features): NaN in the
    first epoch, and equal to :func:`fctheory.metrics.nc4` when the features and the classifier did not
    change between the two epochs (e.g. an evaluation pass after training converged).
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
        self._ref = None  # the last epoch's class means (NumPy float64), the next epoch's shifts and NC4 reference
        self._ref_device = None  # the device of its features
        self._pending = None
        self._handle = None
        self._seconds = 0.0
        self._t_epoch = None
        self._app, self._app_key = None, None
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
            if ref is not None and not host:  # a tensor on the features' device
                ref = torch.as_tensor(ref, device=H.device)
            spare, self._spare = self._spare, None
            if spare is not None and host and spare.reusable(H.shape[1]):
                m = self._moments = spare.reset(ref)
            else:
                m = self._moments = _Moments(
                    self.K, H.shape[1], H.device, ref, self._drop_epoch, self._scratch, host=host
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
        self._ref, self._ref_device = self.statistics.means, m.sums.device  # NumPy float64 (host statistics)
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
            return _Moments(self.K, self._ref.shape[1], self._ref_device, ref, host=host)
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
        got = self._host_numbers(m, W, b) if m.host else None
        if got is None and self.K >= _pairs.LARGE_K:
            got = self._large_numbers(m, W, b)
        if got is None:
            st, summary = m.summary(W)
            app = self._applicability(st.d, st.counts.tolist())
            # the body without its argument checks (see summary()): st, W, b and the optimum are the monitor's
            distances = ufm_distances.__wrapped__(st, W, b, app.optimum, n_spl=app.n_spl)
        else:
            st, summary, distances, app = got
        N = st.N
        row = {"epoch": len(self.rows), "N": N}
        row.update(summary)
        if W is not None:
            row["nc4"] = int(m.disagree) / N if m.ref is not None else math.nan
        row.update(distances)
        row["ufm_applies"] = app.applies
        self.statistics, self.applicability = st, app
        return row

    def _host_numbers(self, m, W, b):
        """(statistics, summary, UFM distances, applicability) of CPU moments from one compiled call
        (fctheory._nc_kernels.epoch_numbers: the kernels of nc_summary_from_moments and ufm_distances), or None
        where those functions must decide (inputs outside the kernels' range, an empty class, a classifier of
        the wrong width, a bias the optimum does not have)."""
        counts, sums, scatter, sq, shift = m.host_moments()
        K, d = sums.shape
        if K > JACOBI_MAX_K:
            return None  # beyond the compiled kernel's classes: _large_numbers or the public functions
        n = counts.tolist()
        if 0 in n:
            return None  # refused by the statistics, naming the empty class
        app = self._applicability(d, n)
        opt = app.optimum  # the library's own optimum: its Grams and bias are float64 NumPy arrays
        if W is not None and W.shape != (K, d) or (b is not None and opt.bias is None):
            return None
        ok, means, mu_G, sigma_W, sigma_B, class_var, summary, norms, h_norm_sq = epoch_numbers(
            counts,
            sums,
            scatter,
            sq,
            shift,
            m.upper,
            np.empty((0, d)) if W is None else W,
            _NO_BIAS if b is None else b,
            opt.means_gram,
            opt.means_gram if W is None else opt.W_gram,
            _NO_BIAS if b is None else opt.bias,
        )
        if not ok:
            return None
        st = ClassStatistics(means, mu_G, counts.astype(np.int64), sigma_W, sigma_B, class_var)
        summary = dict(zip(SUMMARY_KEYS if W is not None else SUMMARY_KEYS[:8], summary.tolist()))
        kw = dict(K=K, n_spl=app.n_spl, W=W is not None, b=b is not None)
        return st, summary, distances_from_kernel_norms(norms, h_norm_sq / sum(n), opt, **kw), app

    def _large_numbers(self, m, W, b):
        """(statistics, summary, UFM distances, applicability) from pairs.LARGE_K classes on: the statistics of the
        moments, nc_summary's one tiled pass over the class pairs (two with a classifier), and the distances to
        the optimum's Grams from that pass's frame fits (no K×K matrix, no further pass); None where the public
        functions must decide (an empty class, a classifier of another width: they refuse it)."""
        counts, sums, scatter, sq, shift = m.on_host()
        K, d = sums.shape
        if 0 in counts.tolist() or (W is not None and W.shape != (K, d)):
            return None
        if m.upper:
            scatter = np.triu(scatter) + np.triu(scatter, 1).T
        st = class_statistics_from_moments.__wrapped__(counts, sums, scatter, sq, shift)
        summary, frames = nc_summary_and_frames.__wrapped__(st, W)
        app = self._applicability(d, st.counts.tolist())
        opt = app.optimum
        use_b = b is not None and opt.bias is not None
        norms = np.full(6, math.nan)  # the layout of fctheory._nc_kernels.ufm_norms
        norms[0], norms[1] = gram_distance_from_fit(frames["means"], opt.means_gram, st.means), opt.means_gram.norm()
        if W is not None:
            norms[2], norms[3] = gram_distance_from_fit(frames["W"], opt.W_gram, W), opt.W_gram.norm()
            norms[4] = float(np.einsum("ij,ij->", W, W))
        if use_b:
            norms[5] = float(np.linalg.norm(b - opt.bias))
        kw = dict(K=K, n_spl=app.n_spl, W=W is not None, b=use_b)
        return st, summary, distances_from_kernel_norms(norms, st.H_norm_sq / st.N, opt, **kw), app

    def _applicability(self, d, counts):
        """The UFM result for width d and these class counts (a list): solved once per training."""
        key = (d, tuple(counts))
        if self._app_key != key:  # the optimum depends on the counts and d only
            self._app = applicable_result(
                loss=self.loss,
                K=self.K,
                d=d,
                counts=np.asarray(counts, dtype=np.int64),
                lam_W=self.lam_W,
                lam_H=self.lam_H,
                lam_b=self.lam_b,
                bias=self.bias,
            )
            self._app_key = key
        return self._app

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
