"""Loading weights (W, U) from files: NumPy ``.npz`` or a PyTorch state_dict."""
from __future__ import annotations

import os

import numpy as np

from .._validate import fail

__all__ = ["load_weights"]

_EMB_KEYS = ("emb.weight", "embedding.weight", "embed.weight")
_LIN_KEYS = ("clf.weight", "linear.weight", "fc.weight", "classifier.weight")


def load_weights(path, *, L: int | None = None):
    """Read (W, U) in fctheory's layout (W: d×n_w, U: K×(L·d)).

    Parameters
    ----------
    path : str or path-like
        ``.npz`` with arrays ``W`` (d×n_w) and ``U`` (K×L·d) — optionally ``Z`` and ``mu`` too,
        returned in ``extra`` — or a PyTorch file (``.pt``/``.pth``) holding a state_dict with
        an embedding table n_w×d and a bias-free linear layer K×(L·d), laid out as in the
        authors' notebooks (keys ``emb.weight`` and ``clf.weight``, or the only two 2-D tensors).
        torch is imported only for such files.
    L : int, optional
        Sentence length, used to check that the linear layer has L·d inputs.

    Returns
    -------
    W : ndarray, shape (d, n_w)
    U : ndarray, shape (K, L·d)
    extra : dict
        Other arrays found in an ``.npz`` (e.g. ``Z``, ``mu``).
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        fail("weights", p, "file does not exist")
    if p.endswith(".npz"):
        with np.load(p, allow_pickle=False) as f:
            names = set(f.files)
            if not {"W", "U"} <= names:
                fail("weights", p, f"an .npz must contain arrays 'W' (d×n_w) and 'U' (K×L·d); found {sorted(names)}")
            W = np.asarray(f["W"], dtype=np.float64)
            U = np.asarray(f["U"], dtype=np.float64)
            extra = {k: np.asarray(f[k]) for k in names - {"W", "U"}}
    else:
        W, U = _load_torch(p)
        extra = {}
    if W.ndim != 2 or U.ndim != 2:
        fail("weights", p, f"W and U must be 2-D, got shapes {W.shape} and {U.shape}")
    if L is not None and U.shape[1] != L * W.shape[0]:
        fail("weights", p, f"U has {U.shape[1]} columns but L·d = {L}·{W.shape[0]} = {L * W.shape[0]}")
    return W, U, extra


def _load_torch(p):
    try:
        import torch  # noqa: PLC0415 - optional dependency, only for state_dict files
    except ImportError:
        fail("weights", p, "is not an .npz file and PyTorch is not installed to read it as a state_dict")
    try:
        sd = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # pragma: no cover - depends on the file
        fail("weights", p, f"could not be read by torch.load ({exc})")
    if hasattr(sd, "state_dict"):
        sd = sd.state_dict()
    if not isinstance(sd, dict):
        fail("weights", p, "must hold a state_dict (a dict of tensors)")
    mats = {k: v.detach().cpu().double().numpy() for k, v in sd.items()
            if hasattr(v, "dim") and v.dim() == 2}
    emb = next((mats[k] for k in _EMB_KEYS if k in mats), None)
    lin = next((mats[k] for k in _LIN_KEYS if k in mats), None)
    if emb is None or lin is None:
        if len(mats) != 2:
            fail("weights", p, f"expected an embedding table and a linear layer; 2-D tensors found: {sorted(mats)}")
        a, b = mats.values()
        # the linear layer has L·d inputs, a multiple of the embedding width d
        emb, lin = (a, b) if b.shape[1] % a.shape[1] == 0 and b.shape[1] >= a.shape[1] else (b, a)
    if any(k.endswith("bias") for k in sd if k.startswith(("clf", "linear", "fc", "classifier"))):
        fail("weights", p, "the linear layer has a bias; the network h has none")
    return np.ascontiguousarray(emb.T), np.ascontiguousarray(lin)
