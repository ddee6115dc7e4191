"""The monitor's moments under data-parallel training: combine every process's shard of an epoch.

Under ``torch.distributed`` (e.g. ``DistributedDataParallel`` or Lightning's ``strategy="ddp"``) each
process sees a shard of the epoch's data, so its one-pass moments (:class:`fctheory.torch.NCMonitor`)
describe that shard only. The moments of the per-class *shifted* features add across shards once they
share one shift per class; :func:`rebase_moments` moves them to a common shift with the exact identities
of a change of origin, and :func:`all_reduce_moments` picks the common shifts (for each class, the shift of
the lowest rank that has seen it), re-bases and sums the moments over the process group. Every process
then holds the moments of the whole epoch and computes the same statistics
(:func:`fctheory.metrics.class_statistics_from_moments`).
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from .._validate import Anything, Bool, fail, public

__all__ = ["all_reduce_moments", "rebase_moments", "sync_active"]


# the one-pass moments, declared once for both functions (checked by rebase_moments, which both call)
_MOMENTS = dict(
    counts=Anything("(K,) tensor of class counts n_k"),
    sums=Anything("(K, d) tensor of shifted class sums s_k"),
    scatter=Anything("(d, d) tensor of the pooled shifted scatter S"),
    sq=Anything("(K,) tensor of shifted squared norms q_k"),
    shift=Anything("(K, d) tensor of the shifts c_k"),
)


@public(**_MOMENTS, new_shift=Anything("(K, d) tensor of the new shifts c'_k"))
def rebase_moments(counts, sums, scatter, sq, shift, new_shift):
    """Moments of features shifted per class by ``shift`` re-expressed with the shifts ``new_shift``.

    Parameters
    ----------
    counts : torch.Tensor
        (K,) class counts n_k.
    sums : torch.Tensor
        (K, d) s_k = Σ_{i: y_i = k} (h_i − c_k).
    scatter : torch.Tensor
        (d, d) S = Σ_i (h_i − c_{y_i})(h_i − c_{y_i})ᵀ (only its upper triangle may be meaningful: the
        correction added is symmetric, so the upper triangle of the result is that of the re-based S).
    sq : torch.Tensor
        (K,) q_k = Σ_{i: y_i = k} ‖h_i − c_k‖².
    shift, new_shift : torch.Tensor
        (K, d) the old shifts c_k and the new ones c'_k.

    Returns
    -------
    tuple of torch.Tensor
        ``(sums, scatter, sq)`` about ``new_shift`` (float64, new tensors; the counts do not change).

    Notes
    -----
    With δ_k = c_k − c'_k, h − c'_k = (h − c_k) + δ_k, so summing over the n_k samples of class k

    * s'_k = s_k + n_k δ_k,
    * q'_k = q_k + 2 s_k·δ_k + n_k ‖δ_k‖²,
    * S' = S + Σ_k (s_k δ_kᵀ + δ_k s_kᵀ + n_k δ_k δ_kᵀ).

    A class with n_k = 0 has s_k = 0 and q_k = 0 and stays so. The corrections are exact algebra; in
    floating point they are accurate when δ_k is small against the spread, which holds for shifts that
    are samples or means of the class (the monitor's).
    """
    tensors = dict(counts=counts, sums=sums, scatter=scatter, sq=sq, shift=shift, new_shift=new_shift)
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            fail(name, type(t).__name__, "must be a torch tensor")
    K, d = sums.shape if sums.ndim == 2 else (-1, -1)
    expected = dict(counts=(K,), sums=(K, d), scatter=(d, d), sq=(K,), shift=(K, d), new_shift=(K, d))
    for name, shape in expected.items():
        if tuple(tensors[name].shape) != shape or K < 0:
            fail(name, f"tensor of shape {tuple(tensors[name].shape)}", f"must have shape {shape} (K, d from sums)")
    f64 = dict(dtype=torch.float64, device=sums.device)
    n = counts.to(**f64)
    s = sums.to(**f64)
    delta = shift.to(**f64) - new_shift.to(**f64)
    s_new = s + n[:, None] * delta
    sq_new = sq.to(**f64) + 2.0 * (s * delta).sum(dim=1) + n * (delta * delta).sum(dim=1)
    cross = s.T @ delta  # Σ_k s_k δ_kᵀ
    scatter_new = scatter.to(**f64) + cross + cross.T + (n[:, None] * delta).T @ delta
    return s_new, scatter_new, sq_new


@public(sync=Bool().or_none(), group=Anything("a torch.distributed process group").or_none())
def sync_active(sync=None, group=None) -> bool:
    """Whether the moments are to be combined across processes.

    ``sync=None`` (auto): exactly when ``torch.distributed`` is available and initialised and the group
    (default: the world) has more than one process. ``sync=False``: never. ``sync=True``: as auto, but an
    uninitialised ``torch.distributed`` is an error instead of a single-process run.
    """
    if sync is False:
        return False
    if not (dist.is_available() and dist.is_initialized()):
        if sync:
            fail("sync", sync, "needs torch.distributed initialised (init_process_group) when an epoch ends")
        return False
    return dist.get_world_size(group) > 1


def _common_shift(shift, have, group):
    """For each class, the shift of the lowest rank that has one (``have``); zero where no rank has."""
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    # the lowest rank holding a class gives the largest world − rank: one MAX reduction finds it
    priority = torch.where(have, world - rank, 0).to(torch.int64)
    dist.all_reduce(priority, op=dist.ReduceOp.MAX, group=group)
    mine = (priority == world - rank) & have
    # one rank contributes each class's shift and the others zeros: the SUM is that shift exactly
    common = torch.where(
        mine[:, None], shift.to(torch.float64), torch.zeros((), dtype=torch.float64, device=shift.device)
    )
    dist.all_reduce(common, op=dist.ReduceOp.SUM, group=group)
    return common


@public(
    **_MOMENTS,
    have=Anything("(K,) bool tensor: the classes whose shift is set").or_none(),
    disagree=Anything("0-d int64 tensor of NC4 disagreements").or_none(),
    group=Anything("a torch.distributed process group").or_none(),
)
def all_reduce_moments(counts, sums, scatter, sq, shift, have=None, disagree=None, group=None):
    """The moments of the whole epoch: every process's shard re-based to common shifts and summed.

    Parameters
    ----------
    counts, sums, scatter, sq, shift : torch.Tensor
        This process's moments (see :func:`rebase_moments`).
    have : torch.Tensor, optional
        (K,) bool: the classes whose shift this process has set (first epoch: seen on this process);
        None: every class (the shifts are the previous epoch's means, already common).
    disagree : torch.Tensor, optional
        0-d int64: this process's NC4 disagreement count (summed as well).
    group : optional
        The process group (default: the world). Every process of the group must call this function.

    Returns
    -------
    tuple of torch.Tensor
        ``(counts, sums, scatter, sq, shift, disagree)`` of the whole epoch, identical on every process
        (``disagree`` None if it was None).

    Notes
    -----
    The common shift of class k is that of the lowest rank that has seen k (the first epoch's shifts are
    each process's first sample of the class); each process re-bases its moments to it
    (:func:`rebase_moments`) before the SUM reductions, since moments about different origins do not add.
    Classes absent from a shard have n_k = s_k = q_k = 0 there and contribute nothing. Four collective
    calls: the owners (K int64), the shifts (K×d), the float64 moments and the integer counts.
    """
    K, d = sums.shape
    if have is None:
        have = torch.ones(K, dtype=torch.bool, device=sums.device)
    common = _common_shift(shift, have, group)
    s, S, q = rebase_moments(counts, sums, scatter, sq, shift, common)
    flat = torch.cat([s.reshape(-1), S.reshape(-1), q])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM, group=group)
    ints = counts.to(torch.int64).reshape(-1)
    if disagree is not None:
        ints = torch.cat([ints, disagree.to(torch.int64).reshape(1)])
    dist.all_reduce(ints, op=dist.ReduceOp.SUM, group=group)
    s, S, q = flat[: K * d].view(K, d), flat[K * d : K * d + d * d].view(d, d), flat[K * d + d * d :]
    return ints[:K], s, S, q, common, (None if disagree is None else ints[K].reshape(()))
