"""fctheory.io.weights: (W, U) from .npz files, trainer checkpoints and state_dicts in the notebooks' layout."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory._files import write_npz
from fctheory.io import load_weights, weights_from_state_dict

D, N_W, K, L = 4, 6, 9, 2


@pytest.fixture
def WU():
    rng = np.random.default_rng(0)
    return rng.standard_normal((D, N_W)), rng.standard_normal((K, L * D))


def test_npz_with_W_and_U_round_trips_exactly(tmp_path, WU):
    W, U = WU
    np.savez(tmp_path / "w.npz", W=W, U=U, Z=np.zeros((K, L), dtype=np.int64))
    W2, U2, extra = load_weights(tmp_path / "w.npz", L=L)
    assert np.array_equal(W2, W) and np.array_equal(U2, U) and set(extra) == {"Z"}


def test_checkpoint_layout_reads_E_as_W_transposed(tmp_path, WU):
    W, U = WU
    p = str(tmp_path / "run.ckpt.npz")
    write_npz(
        p,
        {
            "E": W.T.astype(np.float32),
            "U": U,
            "config": np.array(json.dumps({"lam_W": 0.1})),
            "shape": np.array([3, 2, 2]),
            "Z": np.zeros((K, L), dtype=np.int64),
            "mu": np.full(2, 0.5),
            "hist_loss": np.zeros(3),
        },
        kind="checkpoint",
    )
    W2, U2, extra = load_weights(p)
    assert np.array_equal(W2, W.astype(np.float32).astype(np.float64)) and np.array_equal(U2, U)
    assert set(extra) == {"config", "shape", "Z", "mu"}


def test_notebook_state_dict_maps_emb_transposed_and_clf(WU):
    W, U = WU
    sd = {
        "module.emb.weight": W.T.copy(),
        "module.clf.weight": U,
        "module.clf.bias": np.zeros(K),
        "num_batches": np.array(3),
    }
    W2, U2 = weights_from_state_dict(sd, L=L)
    assert np.array_equal(W2, W) and np.array_equal(U2, U)
    assert W2.flags.c_contiguous and W2.dtype == np.float64


def test_two_unnamed_matrices_are_mapped_by_shape(WU):
    W, U = WU
    W2, U2 = weights_from_state_dict({"a": U, "b": W.T.copy()})
    assert np.array_equal(W2, W) and np.array_equal(U2, U)


def test_state_dict_saved_with_savez_is_read(tmp_path, WU):
    W, U = WU
    np.savez(tmp_path / "sd.npz", **{"emb.weight": W.T, "clf.weight": U})
    W2, U2, _ = load_weights(tmp_path / "sd.npz")
    assert np.array_equal(W2, W) and np.array_equal(U2, U)


@pytest.mark.parametrize(
    "edit, match",
    [
        ({"clf.bias": np.ones(K)}, "non-zero bias"),
        ({"ln.weight": np.full(D, 2.0)}, "LayerNorm with learned scales"),
        ({"ln.bias": np.ones(D)}, "non-zero bias"),
        ({"hidden.weight": np.ones((3, 3))}, "extra 2-D weights"),
        ({"emb.weight": np.full((N_W, D), np.nan)}, "^W.*finite"),
        ({"clf.weight": np.ones((K, 7))}, "^U.*not a multiple"),
    ],
)
def test_state_dicts_not_of_the_papers_network_are_refused(WU, edit, match):
    W, U = WU
    sd = {"emb.weight": W.T.copy(), "clf.weight": U, **edit}
    with pytest.raises(FCTheoryError, match=match):
        weights_from_state_dict(sd)


def test_same_width_matrices_are_ambiguous():
    with pytest.raises(FCTheoryError, match="^state_dict.*cannot tell the embedding"):
        weights_from_state_dict({"a": np.ones((6, 4)), "b": np.ones((9, 4))})


def test_L_that_does_not_fit_is_refused_naming_U(WU):
    W, U = WU
    with pytest.raises(FCTheoryError, match="^U.*L·d"):
        weights_from_state_dict({"W": W, "U": U}, L=3)


def test_non_mapping_and_non_string_keys_are_refused():
    with pytest.raises(FCTheoryError, match="^state_dict.*must be a state_dict"):
        weights_from_state_dict([1, 2])
    with pytest.raises(FCTheoryError, match="^state_dict.*keys must be strings"):
        weights_from_state_dict({1: np.ones((2, 2))})


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda p: None, "^path.*does not exist"),
        (lambda p: p.mkdir(), "^path.*is a folder"),
        (lambda p: np.save(p, np.ones(3)), "^path.*single .npy"),
    ],
)
def test_bad_paths_are_refused_naming_path(tmp_path, make, match):
    p = tmp_path / ("w.npy" if "npy" in match else "w.npz")
    make(p)
    with pytest.raises(FCTheoryError, match=match):
        load_weights(p)


def test_npz_without_weights_lists_what_it_found(tmp_path):
    np.savez(tmp_path / "x.npz", A=np.ones(3))
    with pytest.raises(FCTheoryError, match=r"^path.*found \['A'\]"):
        load_weights(tmp_path / "x.npz")


def test_safetensors_state_dict(tmp_path, WU):
    st = pytest.importorskip("safetensors.numpy")
    W, U = WU
    st.save_file({"emb.weight": np.ascontiguousarray(W.T), "clf.weight": U}, str(tmp_path / "w.safetensors"))
    W2, U2, extra = load_weights(tmp_path / "w.safetensors")
    assert np.array_equal(W2, W) and np.array_equal(U2, U) and extra == {}


@pytest.mark.parametrize(
    "old, name",
    [
        ("fctheory.risk", "load_weights"),
        ("fctheory.risk.io", "load_weights"),
        ("fctheory.risk.io", "weights_from_state_dict"),
        ("fctheory.diagnosis", "load_weights"),
        ("fctheory.diagnosis", "weights_from_state_dict"),
    ],
)
def test_old_paths_are_the_same_objects(old, name):
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module("fctheory.io"), name)
