"""One epoch's moments of the monitor (:class:`fctheory.torch.NCMonitor`), accumulated on the features' device.

Per class k the count n_k, the sum s_k and squared norm q_k of the features shifted by a reference point c_k
(the previous epoch's class mean, else the class's first sample), and the pooled d×d scatter S of the shifted
features: the moments of :func:`fctheory.metrics.class_statistics_from_moments`, and NC4's running count of
disagreements between the classifier and the nearest reference mean. On a GPU a handful of large tensor
operations per batch; on the CPU the compiled kernels of :mod:`fctheory.torch._kernels` on NumPy views of the
same tensors. A class absent from the previous epoch has no mean: its reference point is the mean of the
present classes' means (any point serves a shift) and it is left out of NC4's nearest-mean decision.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validate import fail
from ..metrics import nc_summary_from_moments
from . import _kernels

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

    def __init__(self, K, d, device, ref_means, drop=None, scratch=None, host=None, absent=None):
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
            self._set_ref(ref_means, absent)
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
            if absent is not None:  # a class without a mean is never the nearest one
                offset[K:][torch.as_tensor(absent, device=offset.device)] = -math.inf
            self.nc4 = (w[:K], offset[:K], offset, w.T, (-1, 2, K))

    def _set_ref(self, mu, absent=None):
        """CPU: the shifts and NC4's reference from the previous epoch's means ``mu`` (NumPy float64, K × d) or
        None; ``absent`` (bool, K): the classes without a mean then, never the nearest one."""
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
            if absent is not None:
                self.mu_offset[absent] = -np.inf

    def reusable(self, d) -> bool:
        """Whether this epoch's CPU moments can serve the next epoch (:meth:`reset`): same width, and its
        tensors still the ones the views see (a distributed reduction replaces them)."""
        return (
            self.host
            and self.sums.shape[1] == d
            and self.sums.data_ptr() == self.arrays[1].ctypes.data
            and self.scatter.data_ptr() == self.arrays[2].ctypes.data
        )

    def reset(self, ref_means, absent=None) -> "_Moments":
        """Zero the CPU moments for a new epoch shifted by ``ref_means`` (allocating nothing)."""
        for a in self.arrays[:4]:
            a.fill(0)
        self.disagree_view[0] = 0
        self._set_ref(ref_means, absent)
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
