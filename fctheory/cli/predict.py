"""``fctheory predict``: the predictors of Theorems 1–3 from the command line."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np

from .._budget import check_work
from .._errors import FCTheoryError
from .._validate import check_mu, fail
from ..predictions import predict_type1, predict_type2, predict_type3
from ..tau import tau
from ..tau_star import tau_star
from ..type3 import lambda_max_type3, solve_type3
from ._output import add_format_options, mp_str, print_csv, print_json, setting_object
from ._table import integer, real, table


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predictions of Theorems 1-3 (type I/II/III) or the paper's headline numbers",
        description="Print the theory's predictions for one setting, or with --paper the paper's "
        "headline settings next to the numbers the paper (and the authors' notebooks) report. "
        "An option that does not apply to the chosen kind is refused, never ignored.",
    )
    p.add_argument("kind", nargs="?", choices=("type1", "type2", "type3"), help="which theorem's prediction")
    p.add_argument("--paper", action="store_true", help="reproduce the paper's headline numbers")
    p.add_argument("--nc", type=integer(min=2), default=None, help="concepts n_c (default 3)")
    p.add_argument("--sc", type=integer(min=1), default=None, help="words per concept s_c (default n_w/n_c, or 400)")
    p.add_argument("--nw", type=integer(min=1), default=None, help="vocabulary size n_w = n_c*s_c (default 1200)")
    p.add_argument("--L", type=integer(min=1), default=None, help="sentence length L (default 15)")
    p.add_argument(
        "--K",
        type=real_list(lo=1),
        default=None,
        help="classes K, an integer up to 1e300, or comma-separated values (type1/type2; default 1000; "
        "type3: must be n_c^L)",
    )
    p.add_argument("--d", type=integer(min=1), default=None, help="embedding dimension d (type2 only; default 100)")
    p.add_argument(
        "--lam",
        type=real_list(lo=0, lo_open=True),
        default=None,
        help="weight decay lambda > 0, or comma-separated values: one row each (default 1e-3)",
    )
    p.add_argument(
        "--mu",
        default=None,
        help="word frequencies: uniform, zipf, or comma-separated values (type3; type2 accepts any, "
        "type1 needs uniform)",
    )
    p.add_argument(
        "--precision",
        choices=("float", "mp"),
        default="float",
        help="mp: also compute tau / tau* / (c, r) and the quantities they fix with mpmath, printed "
        "at full precision (decimal strings in --json and --csv)",
    )
    p.add_argument(
        "--dps", type=integer(min=20, max=1000), default=None, help="decimal digits of --precision mp (default 50)"
    )
    add_format_options(p, csv_ok=True)
    p.set_defaults(func=run)


def real_list(lo=None, *, lo_open=False):
    """argparse ``type=``: one number, or comma-separated numbers (each checked as by :func:`real`)."""
    one = real(lo=lo, lo_open=lo_open)

    def parse(text: str) -> list:
        return [one(t) for t in text.split(",")] if "," in text else [one(text)]

    parse.__name__ = "real"
    return parse


# library parameter -> the option that set it (errors from the predictors name the option)
_OPTION = {
    "n_c": "--nc",
    "s_c": "--sc",
    "n_w": "--nw",
    "L": "--L",
    "K": "--K",
    "d": "--d",
    "lam": "--lam",
    "mu": "--mu",
}
_SETTING = ("nc", "sc", "nw", "L", "K", "d", "lam", "mu")


def _sizes(args, n_c):
    """n_w from --nw / --sc (default 1200 = 3·400 words), consistent with --nc."""
    if args.nw is not None and args.sc is not None and args.nw != n_c * args.sc:
        fail("--nw", args.nw, f"must equal n_c*s_c = {n_c}*{args.sc} = {n_c * args.sc} (--nc times --sc)")
    if args.nw is not None:
        if args.nw % n_c:
            fail("--nw", args.nw, f"must be divisible by --nc = {n_c} (n_w = n_c*s_c)")
        return args.nw
    return n_c * (args.sc if args.sc is not None else 400)


def _mu(args, s_c_given):
    """--mu as a frequency vector (named laws need s_c: --sc, --nw/--nc, or 400 words)."""
    text = args.mu.strip()
    if text in ("uniform", "zipf"):
        check_work(
            "--sc",
            s_c_given,
            bytes=16 * s_c_given * (48 if args.kind == "type3" else 1),
            what=f"--mu {text} with s_c = {s_c_given} words",
        )
        return check_mu(text, s_c_given, name="--mu")
    try:
        mu = np.array([float(v) for v in text.split(",")])
    except ValueError:
        fail("--mu", args.mu, "must be uniform, zipf or comma-separated numbers")
    mu = check_mu(mu, name="--mu")
    return mu


def _refuse(args, kind, options, why):
    for opt in options:
        v = getattr(args, opt)
        if v is not None:
            fail(f"--{opt}", v, f"does not apply to {kind}: {why}")


def _grid(*lists):
    """Every combination of the option values, the last option varying fastest."""
    return list(itertools.product(*lists))


def _predict(args):
    """The predictions for every combination of --lam (and --K) values: a list of (setting, prediction)."""
    n_c = 3 if args.nc is None else args.nc
    L = 15 if args.L is None else args.L
    lams = [1e-3] if args.lam is None else args.lam
    if args.kind == "type1":
        _refuse(args, "type1", ("d",), "Theorem 1 does not depend on the embedding dimension")
        if args.mu is not None and args.mu.strip() != "uniform":
            fail("--mu", args.mu, "Theorem 1 (type1) needs uniform word frequencies; use type3 (K = n_c^L) for others")
        n_w = _sizes(args, n_c)
        return [
            (setting_object(n_c=n_c, L=L, K=_num(K), n_w=n_w), lam, predict_type1(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam))
            for K, lam in _grid([1000] if args.K is None else args.K, lams)
        ]
    if args.kind == "type2":
        n_w = _sizes(args, n_c)
        mu = "uniform"
        if args.mu is not None:
            # Theorem 3 holds for any mu > 0: checked, and the predictions do not depend on it
            mu = _mu(args, n_w // n_c)
            mu = args.mu.strip() if args.mu.strip() in ("uniform", "zipf") else mu
        d = 100 if args.d is None else args.d
        return [
            (
                setting_object(n_c=n_c, L=L, K=_num(K), n_w=n_w, mu=mu),
                lam,
                predict_type2(n_c=n_c, L=L, K=K, d=d, lam=lam, n_w=n_w),
            )
            for K, lam in _grid([1000] if args.K is None else args.K, lams)
        ]
    _refuse(args, "type3", ("d",), "Theorem 2 does not depend on the embedding dimension")
    for K in args.K or ():
        if not (L * np.log(n_c) < 709 and K == float(n_c) ** L):
            fail("--K", _num(K), f"type3 (Theorem 2) needs the full latent set, K = n_c^L = {n_c}^{L}: omit --K")
    s_c_given = args.sc if args.sc is not None else (_sizes(args, n_c) // n_c if args.nw is not None else None)
    if args.mu is None:
        args.mu = "uniform"
    mu = _mu(args, s_c_given if s_c_given is not None else 400)
    if s_c_given is not None and mu.shape[-1] != s_c_given:
        fail("--mu", args.mu, f"has {mu.shape[-1]} frequencies but s_c = {s_c_given} (from --sc/--nw)")
    named = args.mu.strip() if args.mu.strip() in ("uniform", "zipf") else mu
    K = n_c**L if L * np.log(n_c) < 709 else float(n_c) ** L
    return [
        (
            setting_object(n_c=n_c, L=L, K=K, s_c=int(mu.shape[-1]), mu=named),
            lam,
            predict_type3(mu=mu, n_c=n_c, L=L, lam=lam),
        )
        for lam in lams
    ]


def _num(K):
    """K as an int when it is one exactly (JSON then shows 1000, not 1000.0)."""
    return int(K) if float(K).is_integer() and abs(K) < 2**63 else K


def _mp_fields(kind, setting, lam, dps):
    """The quantities of the prediction fixed by tau / tau* / (c, r), computed with mpmath at ``dps`` digits."""
    n_c, L, K, n_w = setting["n_c"], setting["L"], setting["K"], setting["n_w"]
    with mpmath.workdps(dps):
        KL = mpmath.mpf(K) * L
        if kind == "type1":
            t = tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, precision="mp", dps=dps)
            return {
                "tau": t,
                "c": mpmath.sqrt(t / n_w),
                "c_prime": mpmath.sqrt(t / KL),
                "norm_W": mpmath.sqrt(t),
                "norm_U": mpmath.sqrt(t),
                "pca_sigma": mpmath.sqrt(t / (n_c - 1)),
            }
        if kind == "type2":
            ts = tau_star(n_c=n_c, L=L, K=K, d=setting["d"], lam=lam, precision="mp", dps=dps)
            return {"tau_star": ts, "c": ts / mpmath.sqrt(KL), "norm_U": ts, "pca_sigma_U": ts / mpmath.sqrt(n_c - 1)}
        sol = solve_type3(mu=setting["_mu"], n_c=n_c, L=L, lam=lam, precision="mp", dps=dps)
        return {"c": sol.c, "r": list(sol.r)}


def _rows(args, preds):
    """One dict per setting: the prediction's fields, the mp values replacing their float twins."""
    dps = 50 if args.dps is None else args.dps
    rows = []
    for setting, lam, pred in preds:
        row = pred.to_dict()
        if args.precision == "mp":
            extra = dict(setting, d=row.get("d"), _mu=np.asarray(row["mu"]) if "mu" in row else None)
            row.update(_mp_fields(args.kind, extra, lam, dps))
        rows.append(row)
    return rows


def run(args) -> int:
    if args.paper:
        return _run_paper(args)
    if args.kind is None:
        fail("kind", None, "choose type1, type2 or type3 (or pass --paper)")
    if args.dps is not None and args.precision != "mp":
        fail("--dps", args.dps, "sets the digits of --precision mp: add --precision mp")
    try:
        preds = _predict(args)
        rows = _rows(args, preds)
    except FCTheoryError as exc:
        # the predictors name their parameter (lam=...): name the option that set it (--lam=...)
        msg = str(exc)
        name = msg.split("=", 1)[0]
        if name in _OPTION:
            raise FCTheoryError(_OPTION[name] + msg[len(name) :]) from None
        raise
    dps = 50 if args.dps is None else args.dps
    if args.json:
        _print_predictions_json(args, preds, rows, dps)
    elif args.csv:
        print_csv(rows, dps=dps)
    else:
        keys = [k for k in rows[0] if k != "mu"]
        heads = ["quantity"] + (["value"] if len(rows) == 1 else [f"lam={r['lam']:g}, K={r['K']:g}" for r in rows])
        print(table([[k] + [_show_mp(r[k], dps) for r in rows] for k in keys], heads))
    return 0


def _show_mp(v, dps: int):
    """A table cell: mpmath numbers (and lists of them) at ``dps`` digits, anything else as it is."""
    if isinstance(v, list) and v and not isinstance(v[0], (int, float)):
        return "[" + ", ".join(mp_str(x, dps) for x in v) + "]"
    return mp_str(v, dps) if not isinstance(v, (int, float, list, type(None), str)) else v


def _print_predictions_json(args, preds, rows, dps: int) -> None:
    settings = [s for s, _, _ in preds]
    task = settings[0] if all(s == settings[0] for s in settings) else None
    params = {
        "kind": args.kind,
        "lam": [lam for _, lam, _ in preds] if len(preds) > 1 else preds[0][1],
        "precision": args.precision,
    }
    if args.kind == "type2":
        params["d"] = rows[0]["d"]
    if args.precision == "mp":
        params["dps"] = dps
    results = {"predictions": rows}
    if task is None:
        results["settings"] = settings
    print_json("predict", task=task, parameters=params, results=results, dps=dps)


def _run_paper(args) -> int:
    """``--paper``: the paper's headline settings next to the reported numbers (no setting options)."""
    if args.kind is not None:
        fail("kind", args.kind, "--paper prints the paper's fixed settings: give no kind")
    for opt in _SETTING + ("dps",):
        if getattr(args, opt) is not None:
            fail(f"--{opt}", getattr(args, opt), "--paper prints the paper's fixed settings: give no setting options")
    if args.precision != "float":
        fail("--precision", args.precision, "--paper prints the paper's fixed settings in double precision")
    rows = paper_rows()
    if args.json:
        print_json("predict", task=None, parameters={"paper": True}, results={"rows": rows})
    elif args.csv:
        print_csv(rows)
    else:
        print("Feature Collapse (Laurent, von Brecht, Bresson): headline numbers")
        print("n_c=3, n_w=1200, L=15, lambda=1e-3")
        # long quantity labels are never wrapped: table() prints them on lines of their own if need be
        cells = [
            [r["quantity"], r["setting"], r["reported"], f"{r['ours']:.8g}", f"{r['rel_diff']:+.1e}", r["source"]]
            for r in rows
        ]
        print(table(cells, ["quantity", "setting", "reported", "fctheory", "rel. diff", "source"]))
    return 0


def paper_rows():
    """The paper's headline settings (section 3 and figures 3-4) with our predictions."""
    p1000 = predict_type1(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3)
    p50 = predict_type1(n_c=3, n_w=1200, L=15, K=50, lam=1e-3)
    p2 = predict_type2(n_c=3, L=15, K=1000, d=100, lam=1e-3, n_w=1200)
    lmax = lambda_max_type3(mu=check_mu("zipf", 400), n_c=3, L=15)
    P, N = "paper (section 3)", "authors' notebook run"
    rows = [
        ("word norm c = sqrt(tau/n_w) (Thm 1)", "K=1000, uniform", 1.42214, P, p1000.c),
        ("observed mean word norm", "K=1000, n_spl=5 (fig 3)", 1.41, "paper, experiment (±0.13)", p1000.c),
        ("word norm c = sqrt(tau/n_w) (Thm 1)", "K=50, uniform", 0.61602, P, p50.c),
        ("observed mean word norm", "K=50, n_spl=100", 0.61, "paper, experiment (±0.06)", p50.c),
        ("PCA sigma_1 of W", "fig 3", 34.9, "paper, figure 3", p1000.pca_sigma),
        ("PCA sigma_2 of W", "fig 3", 34.7, "paper, figure 3", p1000.pca_sigma),
        ("PCA sigma_1 of u_kl", "fig 3", 34.9, "paper, figure 3", p1000.pca_sigma),
        ("PCA sigma_2 of u_kl", "fig 3", 34.6, "paper, figure 3", p1000.pca_sigma),
        ("PCA sigma_1 of W", "fig 3", 35.05, N, p1000.pca_sigma),
        ("||u_kl|| = sqrt(tau/(KL))", "fig 3", 0.40, "notebook plot (radius)", p1000.c_prime),
        ("initial loss H(0)", "K=1000", 6.908, N, p1000.H0),
        ("unregularised CE at optimum H(tau)-lambda*tau", "fig 3", 0.5131, N + " (final train CE)", p1000.ce),
        ("tau* (Thm 3)", "K=1000, d=100", 11.94703, "issue / derivation notes", p2.tau_star),
        ("||u_kl|| = tau*/sqrt(KL) (Thm 3)", "fig 4c", 0.09755, "derivation notes", p2.c),
        ("PCA sigma_1 of U, tau*/sqrt(2)", "fig 4c (h*, Zipf)", 8.387, N, p2.pca_sigma_U),
        ("PCA sigma_1 of phi(W), sqrt(n_w d/2)", "fig 4c", 238.7, N, p2.pca_sigma_phiW),
        ("unregularised CE at optimum H*(tau*)-lambda tau*^2/2", "fig 4c", 0.01675, N + " (final train CE)", p2.ce),
        ("lambda_max of (9)", "K=3^15, s_c=400, Zipf", 1.1515e-4, "derivation notes", lmax),
    ]
    return [
        {
            "quantity": q,
            "setting": s,
            "reported": rep,
            "source": src,
            "ours": float(ours),
            "rel_diff": float(ours / rep - 1),
        }
        for q, s, rep, src, ours in rows
    ]


__all__ = ["register", "run", "paper_rows"]
