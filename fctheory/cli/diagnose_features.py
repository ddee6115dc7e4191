"""``fctheory diagnose-features FILE``: a network's penultimate-layer features and last layer against the
regularised UFM optimum (:func:`fctheory.nc_diagnosis.diagnose_features`).

FILE holds the arrays ``H`` (N × d features), ``y`` (N labels), ``W`` (K × d last-layer weight) and
optionally ``b`` (K bias) as an ``.npz``, a PyTorch ``.pt``/``.pth`` dict of tensors (read with
``weights_only=True``: no code runs) or a ``.safetensors`` file.
"""

from __future__ import annotations

import os

import numpy as np

from .._files import load_npz
from .._validate import PathIn, PathOut, Real, fail
from ..nc_diagnosis import diagnose_features
from ._output import add_format_options, print_json, say
from ._table import table

_KEYS = ("H", "y", "W", "b")


def _load_torch(path):
    try:
        import torch  # noqa: PLC0415 - optional dependency
    except ImportError:
        fail("FILE", path, "is a PyTorch file; reading it needs torch (pip install 'fctheory[torch]')")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - pickle/zip errors of a damaged or foreign file
        fail("FILE", path, f"is not a readable PyTorch tensor dict ({type(exc).__name__}: {exc})")
    if not isinstance(obj, dict):
        fail("FILE", path, f"must hold a dict of tensors with keys H, y, W (and b), got {type(obj).__name__}")
    return {k: (v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)) for k, v in obj.items()}


def _load_safetensors(path):
    try:
        from safetensors.numpy import load_file  # noqa: PLC0415 - optional dependency
    except ImportError:
        fail("FILE", path, "is a safetensors file; reading it needs safetensors (pip install safetensors)")
    try:
        return load_file(path)
    except Exception as exc:  # noqa: BLE001 - header/format errors of a damaged file
        fail("FILE", path, f"is not a readable safetensors file ({type(exc).__name__}: {exc})")


def load_features(path) -> dict:
    """{"H", "y", "W", "b" (or None)} from an .npz, .pt/.pth or .safetensors file (see the module docstring)."""
    PathIn()("FILE", path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npz":
        data = load_npz(path, name="FILE", required=("H", "y", "W"))
    elif ext in (".pt", ".pth"):
        data = _load_torch(path)
    elif ext == ".safetensors":
        data = _load_safetensors(path)
    else:
        fail("FILE", path, "must end in .npz, .pt, .pth or .safetensors")
    missing = [k for k in ("H", "y", "W") if k not in data]
    if missing:
        fail(
            "FILE",
            path,
            f"is missing the entries {missing} (needs H: N x d features, y: N labels, W: K x d; optional b: K)",
        )
    return {k: data.get(k) for k in _KEYS}


def register(sub) -> None:
    p = sub.add_parser(
        "diagnose-features",
        help="penultimate-layer features and last layer against the regularised UFM optimum",
        description="Read features H (N x d), labels y, the last layer W (K x d) and optionally its bias b "
        "from FILE (.npz, .pt/.pth dict of tensors, .safetensors), say which UFM result applies (CE/MSE, "
        "with or without bias, balanced classes, the trivial-solution threshold), and compare the NC "
        "metrics and norms with the predicted optimum.",
    )
    p.add_argument("file", metavar="FILE", help="features file with entries H, y, W (and b)")
    p.add_argument("--lam-W", type=float, required=True, help="weight decay on the last layer W")
    p.add_argument("--lam-H", type=float, required=True, help="feature penalty λ_H of the UFM (λ_H/2)‖H‖²")
    p.add_argument("--lam-b", type=float, default=0.0, help="penalty on the bias (default 0: unregularised)")
    p.add_argument("--loss", default="ce", choices=("ce", "mse"), help="training loss (default ce)")
    p.add_argument("--rtol", type=float, default=0.1, help="tolerance of the verdict (default 0.1)")
    p.add_argument("--out", default=None, help="folder for report.md, diagnosis.json and the figures")
    add_format_options(p, csv_ok=False)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.out is not None:
        PathOut(dir=True)("--out", args.out)
    lam_W = Real(lo=0.0, lo_open=True)("--lam-W", args.lam_W)
    lam_H = Real(lo=0.0, lo_open=True)("--lam-H", args.lam_H)
    lam_b = Real(lo=0.0)("--lam-b", args.lam_b)
    rtol = Real(lo=0.0, lo_open=True)("--rtol", args.rtol)
    data = load_features(args.file)
    D = diagnose_features(
        data["H"], data["y"], data["W"], data["b"], lam_W=lam_W, lam_H=lam_H, lam_b=lam_b, loss=args.loss, rtol=rtol
    )
    report = D.report(args.out) if args.out is not None else None
    if args.json:
        out = D.to_dict()
        if report:
            out["report"] = os.path.abspath(report)
        params = {
            "file": os.path.abspath(args.file),
            "lam_W": lam_W,
            "lam_H": lam_H,
            "lam_b": lam_b,
            "loss": args.loss,
            "rtol": rtol,
            "out": None if args.out is None else os.path.abspath(args.out),
        }
        print_json("diagnose-features", parameters=params, results=out)
        return 0
    a = D.applicability
    say(
        f"{args.file}: K={D.K}, N={D.N}, d={D.d}, loss {D.loss}{' + bias' if D.bias else ''}, "
        f"λ_W={D.lam_W:g}, λ_H={D.lam_H:g}"
    )
    say(f"result: {a.model} UFM, {a.source}" + ("" if a.applies else " (does not apply exactly)"))
    for r in a.reasons:
        say(f"  does not apply: {r}")
    for n in a.notes:
        say(f"  {n}")
    rows = [[k, v] for k, v in D.metrics.items()] + [[k, v] for k, v in D.distances.items()]
    print(table(rows, ["quantity", "value"]))
    say(f"verdict: {D.verdict}")
    if report:
        say(f"report: {os.path.abspath(report)}")
    return 0
