"""The monitor under data-parallel training: the change-of-shift identities against moments computed
directly about the new shifts, and real two-process gloo runs whose every rank's table equals that of a
single monitor fed the whole epoch (on the CPU, and with CUDA tensors where a GPU is present, plus NCCL's
collectives on the moments' dtypes)."""

import multiprocessing
import pickle
import traceback

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
dist = pytest.importorskip("torch.distributed", reason="needs torch.distributed: pip install 'fctheory[torch]'")

from fctheory import FCTheoryError  # noqa: E402
from fctheory.torch import NCMonitor  # noqa: E402
from fctheory.torch.distributed import all_reduce_moments, rebase_moments, sync_active  # noqa: E402

K = 4
TIMING = ("monitor_seconds", "epoch_seconds")


def _moments_about(H, y, shift):
    """Direct moments of the features shifted by ``shift`` (plain NumPy, class by class)."""
    Dev = H - shift[y]
    sums = np.stack([Dev[y == k].sum(axis=0) for k in range(K)])
    sq = np.array([np.sum(Dev[y == k] ** 2) for k in range(K)])
    return np.bincount(y, minlength=K), sums, Dev.T @ Dev, sq


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_rebase_equals_moments_about_the_new_shift():
    """Moments about random shifts c re-based to other random shifts c' equal the moments computed about
    c' directly (class 2 absent: its zero moments stay zero), to 1e-13."""
    rng = np.random.default_rng(1)
    y = rng.choice([0, 1, 3], size=57)
    H = 3.0 * rng.standard_normal((K, 5))[y] + rng.standard_normal((57, 5))
    old, new = rng.standard_normal((K, 5)), rng.standard_normal((K, 5))
    counts, sums, scatter, sq = _moments_about(H, y, old)
    t = [torch.as_tensor(a) for a in (counts, sums, scatter, sq, old, new)]
    s2, S2, q2 = (x.numpy() for x in rebase_moments(*t))
    _, sums_ref, scatter_ref, sq_ref = _moments_about(H, y, new)
    assert _rel(s2, sums_ref) < 1e-13
    assert _rel(S2, scatter_ref) < 1e-13
    assert _rel(q2, sq_ref) < 1e-13
    assert np.all(s2[2] == 0.0) and q2[2] == 0.0


def test_rebase_to_the_same_shift_changes_nothing():
    """δ = 0: the corrections vanish exactly (the later epochs' shifts are already common)."""
    rng = np.random.default_rng(2)
    y = np.arange(20) % K
    H = rng.standard_normal((20, 3))
    shift = rng.standard_normal((K, 3))
    counts, sums, scatter, sq = _moments_about(H, y, shift)
    t = [torch.as_tensor(a) for a in (counts, sums, scatter, sq, shift, shift)]
    out = rebase_moments(*t)
    for got, want in zip(out, (sums, scatter, sq)):
        assert np.array_equal(got.numpy(), want)


def test_rebase_refuses_mismatched_shapes():
    z = torch.zeros
    with pytest.raises(FCTheoryError, match="new_shift"):
        rebase_moments(z(K), z(K, 3), z(3, 3), z(K), z(K, 3), z(K, 2))


def test_sync_is_off_without_an_initialised_process_group():
    assert not dist.is_initialized()
    assert sync_active(None) is False
    assert sync_active(False) is False
    with pytest.raises(FCTheoryError, match="sync"):
        sync_active(True)


# ------------------------------------------------------------------ two real processes (gloo, CPU)
def _data(d, seed):
    """Two epochs' features (the second moved a little) for 2 ranks; rank 0's shard lacks class 3."""
    rng = np.random.default_rng(seed)
    N = 90
    y = rng.integers(0, K, N)
    y[:K] = np.arange(K)
    means = 20.0 + 4.0 * rng.standard_normal((K, d))  # a common offset: shift-sensitive moments
    H = means[y] + rng.standard_normal((N, d))
    on_rank0 = (np.arange(N) % 2 == 0) & (y != 3)
    shards = [np.flatnonzero(on_rank0), np.flatnonzero(~on_rank0)]
    return H, y, shards


def _run(d, seed, rank=None, idle=(), device="cpu"):
    """Two monitored epochs (with a classifier: NC4 in the second) on ``rank``'s shard, or all the data.

    ``idle`` = (rank, epoch) pairs in which that rank gets no batch, its shard going to the other rank (the
    whole-data run is unchanged: the epoch's data is the same)."""
    H, y, shards = _data(d, seed)
    torch.manual_seed(seed)
    fc = torch.nn.Linear(d, K).double().to(device)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
    for epoch in range(2):
        Hx = H + 0.05 * epoch
        if rank is None:
            idx = np.arange(len(y))
        elif (rank, epoch) in idle:
            idx = np.arange(0)
        elif (1 - rank, epoch) in idle:
            idx = np.concatenate(shards)
        else:
            idx = shards[rank]
        with mon.epoch():
            for part in np.array_split(idx, 3) if idx.size else []:  # several batches per epoch
                mon.update(torch.as_tensor(Hx[part], device=device), torch.as_tensor(y[part], device=device))
    return [{k: v for k, v in row.items() if k not in TIMING} for row in mon.rows]


IDLE = ((1, 0), (0, 1))  # rank 1 has no batch in the first epoch, rank 0 none in the second


def _worker(rank, world, store, out, cases, idle_cases=(), device="cpu"):
    try:
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
        rows = {case: _run(*case, rank=rank, device=device) for case in cases}
        rows.update({(case, "idle"): _run(*case, rank=rank, idle=IDLE) for case in idle_cases})
        dist.destroy_process_group()
        result = ("ok", rows)
    except BaseException:  # noqa: BLE001 - the parent reports the child's failure
        result = ("error", traceback.format_exc())
    with open(out, "wb") as f:
        pickle.dump(result, f)


def _two_ranks(tmp_path, cases, idle_cases=(), device="cpu"):
    # fork: the children inherit the imported modules (no start-up cost); CUDA needs fresh processes
    ctx = multiprocessing.get_context("fork" if device == "cpu" else "spawn")
    outs = [tmp_path / f"rank{r}.pkl" for r in range(2)]
    procs = [
        ctx.Process(target=_worker, args=(r, 2, tmp_path / "store", outs[r], cases, idle_cases, device), daemon=True)
        for r in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60 if device == "cpu" else 180)
    for p in procs:
        if p.is_alive():
            p.kill()
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    results = []
    for out in outs:
        with open(out, "rb") as f:
            status, value = pickle.load(f)
        assert status == "ok", value
        results.append(value)
    return results


def _assert_rows_close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for k in w:
            if isinstance(w[k], float):
                np.testing.assert_allclose(g[k], w[k], rtol=1e-12, atol=1e-13, err_msg=k)
            else:
                assert g[k] == w[k], k


def test_two_processes_give_the_whole_epochs_table(tmp_path):
    """d = 6 and d = 256 (the scatter's upper-triangle path), two epochs, a class absent from rank 0's
    shard: each rank's rows (metrics, NC4, UFM distances) equal one monitor's fed all the data."""
    cases = ((6, 0), (256, 1))
    results = _two_ranks(tmp_path, cases)
    for case in cases:
        want = _run(*case)
        assert not np.isnan(want[1]["nc4"])
        for rows in results:
            _assert_rows_close(rows[case], want)


def test_a_process_without_a_batch_takes_part_with_zero_moments(tmp_path):
    """Rank 1 sees no batch in the first epoch (its width comes from the classifier), rank 0 none in the
    second (from the previous epoch's means): no process waits forever, and both report the whole epoch."""
    case = (6, 2)
    results = _two_ranks(tmp_path, (), idle_cases=(case,))
    want = _run(*case)
    for rows in results:
        _assert_rows_close(rows[(case, "idle")], want)


def test_a_monitor_without_a_batch_or_a_width_is_refused():
    """Without torch.distributed (or without a known width) an epoch with no batch is still refused."""
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with pytest.raises(FCTheoryError, match="no batch"):
        with mon.epoch():
            pass


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_two_processes_with_cuda_tensors_give_the_whole_epochs_table(tmp_path):
    """Both ranks' features, classifier and moments on the GPU (gloo reduces CUDA tensors; NCCL needs one GPU
    per rank): every rank's rows equal one CPU monitor's fed all the data."""
    case = (6, 0)
    results = _two_ranks(tmp_path, (case,), device="cuda")
    want = _run(*case)
    for rows in results:
        _assert_rows_close(rows[case], want)


def _nccl_worker(store, out):
    try:
        dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1)
        f64 = dict(dtype=torch.float64, device="cuda")
        counts = torch.tensor([3, 0, 2, 1], dtype=torch.int64, device="cuda")
        sums, shift = torch.randn(K, 5, **f64), torch.randn(K, 5, **f64)
        sums[1] = 0.0
        scatter, sq = torch.eye(5, **f64), torch.rand(K, **f64)
        have = counts > 0
        got = all_reduce_moments(counts, sums, scatter, sq, shift, have, torch.tensor(7, device="cuda"))
        dist.destroy_process_group()
        want = (counts, sums, scatter, sq, torch.where(have[:, None], shift, 0.0), torch.tensor(7))
        result = ("ok", [(g.cpu(), w.cpu()) for g, w in zip(got, want)])
    except BaseException:  # noqa: BLE001 - the parent reports the child's failure
        result = ("error", traceback.format_exc())
    with open(out, "wb") as f:
        pickle.dump(result, f)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or not dist.is_nccl_available(), reason="needs CUDA and NCCL")
def test_nccl_reduces_the_moments_dtypes_of_one_process_to_themselves(tmp_path):
    """NCCL's collectives accept every tensor all_reduce_moments sends (int64 owners and counts, float64
    moments, on the GPU): one process gets its own moments back (a class it has not seen keeps a zero shift)."""
    ctx = multiprocessing.get_context("spawn")
    out = tmp_path / "nccl.pkl"
    proc = ctx.Process(target=_nccl_worker, args=(tmp_path / "store", out), daemon=True)
    proc.start()
    proc.join(timeout=180)
    if proc.is_alive():
        proc.kill()
    assert proc.exitcode == 0, proc.exitcode
    with open(out, "rb") as f:
        status, value = pickle.load(f)
    assert status == "ok", value
    for got, want in value:
        torch.testing.assert_close(got, want.to(got.dtype), rtol=1e-15, atol=1e-15)
