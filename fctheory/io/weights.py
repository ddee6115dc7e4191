"""Loading weights (W, U) from files and state_dicts, in fctheory's layout (W: d×n_w, U: K×(L·d)).

Formats (chosen by content and extension, see :func:`load_weights`):

* ``.npz`` — arrays ``W`` (d×n_w) and ``U`` (K×L·d), optionally ``Z`` and ``mu``; a checkpoint of
  :func:`fctheory.train` (``E`` = Wᵀ, ``U``, ``Z``, ``mu``, ``config``); or the state_dict keys
  of the authors' notebooks saved with ``np.savez`` (``emb.weight``, ``clf.weight``);
* ``.safetensors`` — a state_dict (needs the optional ``safetensors`` package);
* anything else — a PyTorch state_dict saved with ``torch.save(model.state_dict(), path)``, read
  with ``torch.load(..., weights_only=True)`` (needs torch). A fully pickled ``nn.Module`` is refused
  unless ``allow_pickle=True``: unpickling it executes code stored in the file.

State-dict layout (the authors' notebooks, ``SimpleNet``): ``emb`` = ``nn.Embedding(n_w, d)``, whose
weight n_w×d is Wᵀ; an optional ``nn.LayerNorm(d, elementwise_affine=False)`` (no parameters, so
nothing in the state_dict: pass ``layernorm=True`` to the risk/diagnosis); ``clf`` =
``nn.Linear(L·d, K, bias=False)``, whose weight K×(L·d) is U (the flattening is position-major,
so u_{k,ℓ} = U[k, ℓd:(ℓ+1)d]). Other common names are recognised (``embedding``, ``embed``,
``linear``, ``fc``, ``classifier``, …, with any prefix such as ``module.``), and a state_dict with
exactly two 2-D tensors is mapped by shape.
"""

from __future__ import annotations

import os
import pickle

import numpy as np

from .._errors import FCTheoryError
from .._files import load_npz
from .._validate import Anything, Bool, Int, as_path, fail, public

__all__ = ["load_weights", "weights_from_state_dict"]

_EMB_NAMES = ("emb", "embedding", "embed", "embeddings", "word_embeddings", "wte", "encoder")
_LIN_NAMES = ("clf", "linear", "fc", "classifier", "head", "out", "output", "decoder", "lin")
# trainer checkpoints (fctheory.trainer.core.save_checkpoint) hold E = Wᵀ (word-major) and U
_CKPT_KEYS = {"E", "U", "config", "shape", "Z", "mu"}


def _module_of(key: str) -> tuple[str, str]:
    """('clf', 'weight') for 'module.clf.weight'."""
    parts = key.split(".")
    if len(parts) < 2:
        return "", key
    return parts[-2], parts[-1]


def _to_numpy(name, key, v):
    """A tensor or array as float64 NumPy (None for non-floating entries such as counters)."""
    if hasattr(v, "detach"):  # torch.Tensor, without importing torch
        if not (v.is_floating_point() or v.is_complex()):
            return None
        if v.is_complex():
            fail(name, key, "holds a complex tensor; the network's weights are real")
        return v.detach().cpu().double().numpy()
    a = np.asarray(v)
    if a.dtype.kind in "iub":
        return None
    if a.dtype.kind != "f":
        fail(name, key, f"holds an entry of dtype {a.dtype}; expected real floating-point weights")
    return a.astype(np.float64)


@public(
    state_dict=Anything("a mapping of parameter names to tensors/arrays"),
    L=Int(min=1).or_none(),
    name=Anything("the parameter name used in error messages"),
)
def weights_from_state_dict(state_dict, *, L=None, name="state_dict"):
    """Map a state_dict of the paper's network to fctheory's (W, U).

    Parameters
    ----------
    state_dict : mapping of str to tensor or array
        E.g. ``model.state_dict()`` of the authors' ``SimpleNet`` (``emb.weight`` n_w×d = Wᵀ,
        ``clf.weight`` K×(L·d) = U), or arrays under ``W`` (d×n_w) and ``U`` (K×L·d).
    L : int, optional
        Sentence length: checks that the linear layer has L·d inputs (and resolves the
        embedding/linear roles when only shapes tell them apart).
    name : str
        Parameter name in error messages (the file path when called by :func:`load_weights`).

    Returns
    -------
    W : ndarray, shape (d, n_w)
    U : ndarray, shape (K, L·d)

    Raises
    ------
    FCTheoryError
        Not a mapping; no embedding/linear pair found (the keys found are listed); a non-zero bias
        on the linear layer (h and h* have none); a LayerNorm with affine parameters other than
        (1, 0) (φ has none); extra 2-D weights (another layer); shapes that do not fit.
    """
    arrays = _float_arrays(state_dict, name)
    if "W" in arrays and "U" in arrays:  # fctheory's own layout
        return _finish(name, arrays["W"], arrays["U"], L)
    ke, kl = _embedding_and_linear(arrays, L, name)
    _check_no_other_layer(arrays, ke, kl, name)
    W = np.ascontiguousarray(arrays[ke].T)
    U = np.ascontiguousarray(arrays[kl])
    return _finish(name, W, U, L)


def _float_arrays(state_dict, name) -> dict:
    """The floating-point entries of a state_dict (or of a module's) as float64 NumPy arrays."""
    if hasattr(state_dict, "state_dict") and callable(state_dict.state_dict):
        state_dict = state_dict.state_dict()
    if not hasattr(state_dict, "items") or not callable(state_dict.items):
        fail(name, type(state_dict).__name__, "must be a state_dict (a mapping of parameter names to tensors)")
    arrays = {}
    for k, v in state_dict.items():
        if not isinstance(k, str):
            fail(name, repr(k), "state_dict keys must be strings")
        a = _to_numpy(name, k, v)
        if a is not None:
            arrays[k] = a
    return arrays


def _embedding_and_linear(arrays: dict, L, name) -> tuple[str, str]:
    """The keys of the embedding table and the linear layer: by module name, else by shape (two 2-D tensors)."""
    emb = [k for k in arrays if _module_of(k)[1] == "weight" and _module_of(k)[0] in _EMB_NAMES and arrays[k].ndim == 2]
    lin = [k for k in arrays if _module_of(k)[1] == "weight" and _module_of(k)[0] in _LIN_NAMES and arrays[k].ndim == 2]
    mats = [k for k in arrays if arrays[k].ndim == 2]
    if len(emb) == 1 and len(lin) == 1:
        return emb[0], lin[0]
    if len(mats) != 2:
        fail(
            name,
            {k: tuple(arrays[k].shape) for k in mats},
            "expected the paper's network: one embedding table "
            "(n_w×d, e.g. 'emb.weight') and one bias-free linear layer (K×L·d, e.g. 'clf.weight')",
        )
    a, b = mats
    fits_ab = arrays[b].shape[1] % arrays[a].shape[1] == 0  # a embedding (·×d), b linear (·×L·d)
    fits_ba = arrays[a].shape[1] % arrays[b].shape[1] == 0
    if L is not None:
        fits_ab = arrays[b].shape[1] == L * arrays[a].shape[1]
        fits_ba = arrays[a].shape[1] == L * arrays[b].shape[1]
    if fits_ab and fits_ba and arrays[a].shape[1] == arrays[b].shape[1]:
        fail(
            name,
            mats,
            "two 2-D tensors of the same width: cannot tell the embedding from the linear layer "
            "by shape; name them emb.weight (n_w×d) and clf.weight (K×L·d) as in the authors' notebooks",
        )
    if not (fits_ab or fits_ba):
        fail(
            name,
            {k: arrays[k].shape for k in mats},
            "no embedding (n_w×d) and linear layer (K×L·d) pair: "
            "the linear layer's width must be a multiple L·d of the embedding width d",
        )
    return (a, b) if fits_ab else (b, a)


def _check_no_other_layer(arrays: dict, ke: str, kl: str, name) -> None:
    """Refuse what h and h* do not have: another 2-D weight, a bias, a LayerNorm with affine parameters."""
    others = [k for k in arrays if arrays[k].ndim == 2 and k not in (ke, kl)]
    if others:
        fail(
            name,
            others,
            f"extra 2-D weights besides {ke!r} and {kl!r}: the paper's network has only an "
            "embedding and one bias-free linear layer",
        )
    for k, a in arrays.items():
        mod, leaf = _module_of(k)
        if k in (ke, kl):
            continue
        if k == kl[: -len("weight")] + "bias" or (mod == _module_of(kl)[0] and leaf == "bias"):
            if np.any(a != 0):
                fail(
                    name,
                    k,
                    "the linear layer has a non-zero bias; the networks h and h* have none "
                    "(build it with nn.Linear(L*d, K, bias=False))",
                )
            continue
        if leaf == "weight" and a.ndim == 1 and np.any(a != 1):
            fail(
                name,
                k,
                "a LayerNorm with learned scales; φ of the paper has no affine parameters "
                "(nn.LayerNorm(d, elementwise_affine=False))",
            )
        if leaf == "bias" and a.ndim == 1 and np.any(a != 0):
            fail(name, k, "a non-zero bias; the networks h and h* have no bias")


def _finish(name, W, U, L):
    if W.ndim != 2:
        fail("W", W, f"must be a 2-D array d×n_w, got shape {W.shape} (from {name})")
    if U.ndim != 2:
        fail("U", U, f"must be a 2-D array K×(L·d), got shape {U.shape} (from {name})")
    d = W.shape[0]
    if d < 1 or W.shape[1] < 1 or U.shape[0] < 1:
        fail("W", W, f"empty weights: W {W.shape}, U {U.shape} (from {name})")
    if U.shape[1] % d:
        fail("U", U, f"has {U.shape[1]} columns, not a multiple L·d of the embedding dimension d = {d} (from {name})")
    if L is not None and U.shape[1] != L * d:
        fail("U", U, f"has {U.shape[1]} columns but L·d = {L}·{d} = {L * d} (from {name})")
    if not np.all(np.isfinite(W)):
        fail("W", W, f"must be finite (from {name})")
    if not np.all(np.isfinite(U)):
        fail("U", U, f"must be finite (from {name})")
    return np.ascontiguousarray(W, dtype=np.float64), np.ascontiguousarray(U, dtype=np.float64)


@public(path=Anything("an existing weights file (checked in the body)"), L=Int(min=1).or_none(), allow_pickle=Bool())
def load_weights(path, *, L=None, allow_pickle=False):
    """Read (W, U) in fctheory's layout (W: d×n_w, U: K×(L·d)) from a file.

    Parameters
    ----------
    path : str or path-like
        ``.npz`` with arrays ``W`` (d×n_w) and ``U`` (K×L·d) — optionally ``Z`` and ``mu`` too,
        returned in ``extra`` — or a trainer checkpoint, or an ``.npz`` / ``.safetensors`` /
        PyTorch file holding a state_dict of the paper's network (see the module docstring for
        the layout: ``emb.weight`` n_w×d, ``clf.weight`` K×(L·d)). torch and safetensors are
        imported only for such files.
    L : int, optional
        Sentence length, used to check that the linear layer has L·d inputs.
    allow_pickle : bool
        Also read a fully pickled ``torch.nn.Module`` (``torch.save(model, path)``). **This executes
        code stored in the file**: use it only for files you trust. Default: refused with a message
        saying how to save a state_dict instead.

    Returns
    -------
    W : ndarray, shape (d, n_w)
    U : ndarray, shape (K, L·d)
    extra : dict
        Other arrays found in an ``.npz`` (e.g. ``Z``, ``mu``; ``config`` for a checkpoint).

    Raises
    ------
    FCTheoryError
        Missing, damaged or truncated files, foreign content, missing keys, shapes that do not fit,
        non-finite weights, a pickled module without ``allow_pickle``; the message names the file.
    """
    p = as_path("path", path)
    if not os.path.exists(p):
        fail("path", p, "does not exist")
    if os.path.isdir(p):
        fail("path", p, "is a folder; expected a weights file (a run directory is read by fctheory.io.load_run)")
    low = p.lower()
    if low.endswith(".npz"):
        return _load_npz(p, L)
    if low.endswith(".safetensors"):
        W, U = weights_from_state_dict(_load_safetensors(p), L=L, name=p)
        return W, U, {}
    if low.endswith(".npy"):
        fail(
            "path",
            p,
            "a single .npy array cannot hold both W and U; save them with np.savez(path, W=W, U=U) (W d×n_w, U K×L·d)",
        )
    W, U = weights_from_state_dict(_load_torch(p, allow_pickle), L=L, name=p)
    return W, U, {}


def _load_npz(p, L):
    data = load_npz(p, name="path")
    names = set(data)
    if {"W", "U"} <= names:
        W, U = data["W"], data["U"]
        for key, a in (("W", W), ("U", U)):
            if a.dtype.kind not in "fiu":
                fail("path", p, f"array {key!r} has dtype {a.dtype}; expected real numbers")
        extra = {k: v for k, v in data.items() if k not in ("W", "U")}
        W, U = _finish(p, np.asarray(W, dtype=np.float64), np.asarray(U, dtype=np.float64), L)
        return W, U, extra
    if {"E", "U", "config"} <= names:  # a trainer checkpoint: E is Wᵀ
        W, U = _finish(p, np.asarray(data["E"], dtype=np.float64).T, np.asarray(data["U"], dtype=np.float64), L)
        return W, U, {k: v for k, v in data.items() if k in _CKPT_KEYS - {"E", "U"}}
    mats = {k: v for k, v in data.items() if v.ndim == 2 and v.dtype.kind == "f"}
    if mats and any("." in k for k in mats):  # a state_dict saved with np.savez(**sd)
        W, U = weights_from_state_dict(data, L=L, name=p)
        return W, U, {k: v for k, v in data.items() if k in ("Z", "mu")}
    fail(
        "path",
        p,
        f"an .npz must contain arrays 'W' (d×n_w) and 'U' (K×L·d) (or a state_dict with "
        f"emb.weight and clf.weight); found {sorted(names)}",
    )


def _load_safetensors(p):
    try:
        from safetensors.numpy import load_file  # noqa: PLC0415 - optional dependency
    except ImportError:
        fail("path", p, "reading .safetensors needs the optional package safetensors (pip install 'fctheory[weights]')")
    try:
        return load_file(p)
    except FCTheoryError:
        raise
    except Exception as exc:  # the library raises several types for damaged headers and data
        fail("path", p, f"is not a readable .safetensors file ({type(exc).__name__}: {exc})")


def _load_torch(p, allow_pickle):
    try:
        import torch  # noqa: PLC0415 - optional dependency, only for state_dict files
    except ImportError:
        fail(
            "path",
            p,
            "is not an .npz file and PyTorch is not installed to read it as a state_dict "
            "(pip install 'fctheory[weights]')",
        )
    try:
        return torch.load(p, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only" not in str(exc).lower() and "weights_only" not in str(exc).lower():
            fail("path", p, f"could not be read by torch.load ({type(exc).__name__}: {str(exc)[:200]})")
        if not allow_pickle:
            fail(
                "path",
                p,
                "holds a pickled Python object (e.g. a whole nn.Module saved with torch.save(model, "
                "path)), which can only be read by executing code from the file; save model.state_dict() "
                "instead, or, for a file you trust, pass allow_pickle=True (CLI: --unsafe-pickle)",
            )
    except Exception as exc:  # truncated archives, foreign files: torch raises RuntimeError and others
        fail("path", p, f"could not be read by torch.load ({type(exc).__name__}: {str(exc)[:200]})")
    try:
        return torch.load(p, map_location="cpu", weights_only=False)  # explicit opt-in: runs pickled code
    except Exception as exc:
        fail(
            "path",
            p,
            f"could not be unpickled ({type(exc).__name__}: {str(exc)[:200]}); the classes it needs must be importable",
        )
