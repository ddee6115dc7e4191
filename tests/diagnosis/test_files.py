"""Weights, task files, Z and μ from files: round trips and refusals (fctheory.diagnosis, fctheory.risk.io)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fctheory as fc
from fctheory.diagnosis import (
    load_frequencies,
    load_latent,
    load_run,
    load_task,
    load_weights,
    save_task,
    weights_from_state_dict,
)

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
nn = torch.nn


class NotebookNet(nn.Module):
    """The module layout of the authors' notebooks (SimpleNet): emb, optional lnorm, clf."""

    def __init__(self, n_w, L, d, K, layer_norm=False):
        super().__init__()
        self.emb = nn.Embedding(n_w, d)
        if layer_norm:
            self.lnorm = nn.LayerNorm(d, elementwise_affine=False)
        self.clf = nn.Linear(L * d, K, bias=False)


def _net(task, d=4, layer_norm=False, seed=0):
    torch.manual_seed(seed)
    return NotebookNet(task.n_w, task.L, d, task.K, layer_norm).double()


def test_notebook_state_dict_round_trips(tmp_path):
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=4, lam=0.01, seed=0)
    net = _net(task, layer_norm=True)
    with torch.no_grad():
        net.emb.weight.copy_(torch.tensor(W.T))
        net.clf.weight.copy_(torch.tensor(U))
    p = tmp_path / "net.pt"
    torch.save(net.state_dict(), p)
    W2, U2, _ = load_weights(p)
    np.testing.assert_array_equal(W2, W)
    np.testing.assert_array_equal(U2, U)
    # and the network's own forward pass agrees with fctheory's scores (the layout is right, not just shapes)
    X, _ = task.sample(3, seed=np.random.default_rng(0))
    xt = torch.tensor(X)
    ours = fc.scores(W2, U2, X, layernorm=True, eps=1e-5)
    theirs = net.clf(net.lnorm(net.emb(xt)).reshape(len(X), -1)).detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_safetensors_and_npz_state_dicts(tmp_path):
    safetensors_torch = pytest.importorskip(
        "safetensors.torch", reason="needs torch for safetensors.torch: pip install 'fctheory[weights]'"
    )
    task = fc.Task.full(3, 2, 2)
    net = _net(task)
    p = tmp_path / "net.safetensors"
    safetensors_torch.save_file(net.state_dict(), str(p))
    W, U, _ = load_weights(p)
    np.testing.assert_array_equal(W, net.emb.weight.detach().numpy().T)
    q = tmp_path / "sd.npz"
    np.savez(q, **{k: v.numpy() for k, v in net.state_dict().items()})
    W2, U2, _ = load_weights(q)
    np.testing.assert_array_equal(W2, W)
    np.testing.assert_array_equal(U2, U)


def test_data_parallel_prefix_and_in_memory_state_dict():
    task = fc.Task.full(3, 2, 2)
    net = _net(task)
    sd = {"module." + k: v for k, v in net.state_dict().items()}
    W, U = weights_from_state_dict(sd)
    np.testing.assert_array_equal(U, net.clf.weight.detach().numpy())
    W2, U2 = weights_from_state_dict(net)  # a module: its state_dict is used
    np.testing.assert_array_equal(W2, W)


def test_pickled_module_refused_unless_opted_in(tmp_path):
    task = fc.Task.full(3, 2, 2)
    net = _net(task)
    p = tmp_path / "full.pt"
    torch.save(net, p)
    with pytest.raises(fc.FCTheoryError, match="allow_pickle=True"):
        load_weights(p)
    W, U, _ = load_weights(p, allow_pickle=True)
    np.testing.assert_array_equal(U, net.clf.weight.detach().numpy())


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda sd: sd.update({"clf.bias": torch.ones(sd["clf.weight"].shape[0])}), "non-zero bias"),
        (lambda sd: sd.update({"hidden.weight": torch.ones(3, 3)}), "extra 2-D weights"),
        (lambda sd: sd.pop("clf.weight"), "expected the paper's network"),
        (lambda sd: sd.update({"lnorm.weight": 2 * torch.ones(4)}), "affine"),
    ],
)
def test_state_dicts_that_are_not_the_papers_network_are_refused(tmp_path, mutate, match):
    task = fc.Task.full(3, 2, 2)
    sd = dict(_net(task).state_dict())
    mutate(sd)
    p = tmp_path / "x.pt"
    torch.save(sd, p)
    with pytest.raises(fc.FCTheoryError, match=match):
        load_weights(p)


@pytest.mark.parametrize("content", [b"", b"not a zip", b"PK\x03\x04truncated"])
@pytest.mark.parametrize("ext", [".npz", ".pt", ".safetensors"])
def test_damaged_files_are_refused(tmp_path, content, ext):
    p = tmp_path / f"bad{ext}"
    p.write_bytes(content)
    with pytest.raises(fc.FCTheoryError, match="bad"):
        load_weights(p)


def test_truncated_npz_refused(tmp_path):
    p = tmp_path / "w.npz"
    np.savez(p, W=np.ones((4, 6)), U=np.ones((9, 8)))
    q = tmp_path / "t.npz"
    q.write_bytes(p.read_bytes()[:-100])
    with pytest.raises(fc.FCTheoryError, match="t.npz"):
        load_weights(q)


def test_shape_mismatch_names_U(tmp_path):
    p = tmp_path / "w.npz"
    np.savez(p, W=np.ones((4, 6)), U=np.ones((9, 7)))
    with pytest.raises(fc.FCTheoryError, match="^U="):
        load_weights(p)
    np.savez(p, W=np.ones((4, 6)), U=np.ones((9, 8)), Z=fc.Task.full(3, 2, 2).Z[:5])
    with pytest.raises(fc.FCTheoryError, match="^U="):
        load_run(p)  # the file's Z says K = 5, U has 9 rows


@pytest.mark.parametrize("mu", ["uniform", "zipf", [0.1 + 1e-17, 0.2, 0.7 - 1e-17]])
def test_task_file_round_trips_exactly(tmp_path, mu):
    task = fc.Task.random(3, 3, 3, 11, mu=mu, seed=4)
    p = tmp_path / "task.json"
    save_task(task, p)
    t2 = load_task(p)
    assert np.array_equal(t2.Z, task.Z) and np.array_equal(t2.mu, task.mu)
    assert (t2.n_c, t2.s_c, t2.L) == (task.n_c, task.s_c, task.L)


@pytest.mark.parametrize(
    "edit, name",
    [
        ({"version": 99}, "task:version"),
        ({"Z": [[0, 0], [0, 0]]}, "task:Z"),
        ({"Z": [[0, 3]]}, "task:Z"),
        ({"Z": [[0, 1, 2]]}, "task:Z"),
        ({"Z": [[0.5, 1]]}, "task:Z"),
        ({"mu": [0.5, 0.6]}, "task:mu"),
        ({"n_c": "3"}, "task:n_c"),
        ({"K": 4}, "task:K"),
    ],
)
def test_bad_task_files_are_refused_naming_the_entry(tmp_path, edit, name):
    obj = {"format": "fctheory-task", "version": 1, "n_c": 3, "s_c": 2, "L": 2, "Z": [[0, 1], [2, 2]], "mu": "uniform"}
    obj.update(edit)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(obj))
    with pytest.raises(fc.FCTheoryError, match=f"^{name}="):
        load_task(p)


def test_latent_variables_from_npy_csv_json(tmp_path):
    Z = fc.Task.random(3, 2, 4, 7, seed=0).Z
    np.save(tmp_path / "z.npy", Z)
    (tmp_path / "z.csv").write_text("l0,l1,l2,l3\n" + "\n".join(",".join(map(str, r)) for r in Z) + "\n")
    (tmp_path / "z.json").write_text(json.dumps({"Z": Z.tolist()}))
    for f in ("z.npy", "z.csv", "z.json"):
        np.testing.assert_array_equal(load_latent(tmp_path / f, n_c=3, L=4, K=7), Z)


@pytest.mark.parametrize(
    "Z, kw",
    [
        (np.array([[0, 1], [0, 1]]), {}),  # duplicated rows
        (np.array([[0, 1], [0, 3]]), {"n_c": 3}),  # concept out of range
        (np.array([[0, 1], [1, 0]]), {"L": 3}),  # wrong L
        (np.array([[0, 1], [1, 0]]), {"K": 3}),  # wrong K
        (np.array([[-1, 1], [1, 0]]), {}),  # negative
        (np.array([0, 1, 2]), {}),  # 1-D
        (np.array([[0.5, 1.0]]), {}),  # not integers
    ],
)
def test_bad_latent_variables_are_refused_naming_Z(tmp_path, Z, kw):
    np.save(tmp_path / "z.npy", Z)
    with pytest.raises(fc.FCTheoryError, match="^Z="):
        load_latent(tmp_path / "z.npy", **kw)


def test_frequencies_from_files(tmp_path):
    (tmp_path / "mu.json").write_text("[0.5, 0.25, 0.25]")
    np.testing.assert_array_equal(load_frequencies(tmp_path / "mu.json", s_c=3), [0.5, 0.25, 0.25])
    (tmp_path / "counts.csv").write_text("2\n1\n1\n")
    np.testing.assert_array_equal(load_frequencies(tmp_path / "counts.csv", normalize=True), [0.5, 0.25, 0.25])
    with pytest.raises(fc.FCTheoryError, match="^mu="):
        load_frequencies(tmp_path / "counts.csv")  # counts do not sum to 1 without normalize
    with pytest.raises(fc.FCTheoryError, match="^mu="):
        load_frequencies(tmp_path / "mu.json", s_c=4)


def test_trainer_checkpoint_carries_task_and_config(tmp_path):
    task = fc.Task.random(3, 2, 3, 7, seed=1)
    ck = tmp_path / "r.ckpt.npz"
    fc.train(task, n_spl=2, d=3, epochs=2, backend="numpy", dtype="float64", checkpoint=ck, measure=False)
    rf = load_run(ck)
    assert rf.source == "checkpoint" and np.array_equal(rf.task.Z, task.Z)
    assert rf.config["lam_W"] == 1e-3 and rf.W.shape == (3, task.n_w)
