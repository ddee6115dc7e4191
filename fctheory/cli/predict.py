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
from ..type3 import solve_type3
from ..trainer.presets import get_preset
from ._output import add_format_options, mp_str, print_csv, print_json, say, setting_object
from ._table import integer, real, table
from ..io.tasks import task_fingerprint
from .paper import best_answers, paper_rows


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predictions of Theorems 1-3 (type I/II/III) or the paper's headline numbers",
        description="Print the theory's predictions for one setting, or with --paper the paper's "
        "headline settings next to the numbers the paper (and the authors' notebooks) report. "
        "An option that does not apply to the chosen kind is refused, never ignored.",
    )
    p.add_argument("kind", nargs="?", choices=("type1", "type2", "type3"), help="which theorem's prediction")
    p.add_argument(
        "--paper",
        action="store_true",
        help="the paper's headline numbers next to the theorems' and the certified optima of the presets' latent sets",
    )
    p.add_argument(
        "--recompute",
        action="store_true",
        help="with --paper: solve the presets' certified optima now (about a minute) instead of reading the stored "
        "certificates",
    )
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
    if args.recompute:
        fail("--recompute", True, "solves the presets' optima of --paper: add --paper")
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
    """``--paper``: each preset's quantities, the paper's number beside the theorem's and the project's best."""
    if args.kind is not None:
        fail("kind", args.kind, "--paper prints the paper's fixed settings: give no kind")
    for opt in _SETTING + ("dps",):
        if getattr(args, opt) is not None:
            fail(f"--{opt}", getattr(args, opt), "--paper prints the paper's fixed settings: give no setting options")
    if args.precision != "float":
        fail("--precision", args.precision, "--paper prints the paper's fixed settings in double precision")
    best = best_answers(recompute=args.recompute)
    rows = paper_rows(best)
    params = {"paper": True, "recompute": bool(args.recompute)}
    if args.json:
        print_json("predict", task=None, parameters=params, results={"presets": _presets(), "rows": rows})
    elif args.csv:
        print_csv(_flat(rows))
    else:
        _print_paper(rows)
    return 0


def _presets() -> list:
    """The presets of the table: name, description, sizes, network, decays, and the latent set's fingerprint."""
    out = []
    for name in ("fig3", "k50", "fig4c", "fig4a", "fig4b"):
        p = get_preset(name)
        task = p.task()
        out.append(
            {
                "name": name,
                "description": p.description,
                "task": setting_object(n_c=task.n_c, L=task.L, K=task.K, s_c=task.s_c, mu=p.mu),
                "network": "h*" if p.layernorm else "h",
                "d": p.d,
                "n_spl": p.n_spl,
                "lam_W": p.lam_W,
                "lam_U": p.lam_U,
                "latent_set_sha256": task_fingerprint(task),
            }
        )
    return out


def _flat(rows) -> list:
    """CSV: one line per answer (preset, key, quantity, setting, then the answer's fields)."""
    flat = []
    for r in rows:
        head = {k: r[k] for k in ("preset", "key", "quantity", "setting")}
        flat += [{**head, **a} for a in r["answers"]]
    return flat


#: the short names of the reported numbers' sources in the table
_SOURCE_MARK = {"paper": "", "notebook": " nb", "notes": " notes"}


def _cell(value, digits: int = 6) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(f"{v:.{digits}g}" for v in value)
    return f"{value:.{digits}g}"


def _theorem_cell(a) -> str:
    if a["value"] is None:
        return "-"
    if a["provenance"] == "approximation":
        err = "?" if a["error"] is None else f"{100 * a['error']:.2g}%"
        return f"{_cell(a['value'], 7)} ({err})"
    return _cell(a["value"], 7)


def _exact_cell(a, common: str, marks: dict) -> str:
    """The exact optimum's value; its provenance is said once under the preset's table, a row's own addition to it
    by a mark (*, **, ...) explained there too."""
    if a["provenance"] == "exact":  # a closed form that holds on the preset's own latent set
        return f"{_cell(a['value'])} (exact)"
    if a["provenance"] == "none" or a["note"] == common:
        return _cell(a["value"])
    extra = a["note"][len(common) :].lstrip("; ") if a["note"].startswith(common) else a["note"]
    return f"{_cell(a['value'])} {marks.setdefault(extra, '*' * (len(marks) + 1))}"


def _common_note(answers) -> str:
    """The shortest note of the certified (or missing) answers of a column: said once under the table."""
    return min((a["note"] for a in answers if a["provenance"] in ("exact certified", "none")), key=len, default="")


def _print_preset(name, rows) -> None:
    p = get_preset(name)
    exact = [a for r in rows for a in r["answers"] if a["source"] == "exact optimum"]
    train = [a for r in rows for a in r["answers"] if a["source"] == "training-set optimum"]
    common, common_t = _common_note(exact), _common_note([a for a in train if a["value"] is not None])
    print()
    say(f"{name}: {p.description}; {rows[0]['setting']}, lambda_W={p.lam_W:g}, lambda_U={p.lam_U:g}")
    cells, marks, why = [], {}, {}
    for r in rows:
        by = {}
        for a in r["answers"]:
            by.setdefault(a["source"], a)
        reported = "; ".join(
            _cell(a["value"], 10) + _SOURCE_MARK.get(a["source"], " " + a["source"])
            for a in r["answers"]
            if a["provenance"] == "reported"
        )
        t = by["theorem"]
        if t["provenance"] == "approximation" and t["error"] is None:
            why.setdefault(t["note"])
        cells.append(
            [r["quantity"], reported or "-", _theorem_cell(t), _exact_cell(by["exact optimum"], common, marks)]
        )
        if common_t:
            ta = by.get("training-set optimum")
            cells[-1].append("-" if ta is None else _exact_cell(ta, common_t, marks))
    heads = ["quantity", "paper", "theorem (error)", "exact optimum"] + ["training set"] * bool(common_t)
    print(table(cells, heads))
    for note in why:
        say(f"theorem: {note}")
    if common:
        say(("exact optimum: " if exact[0]["provenance"] != "none" else "exact optimum: none: ") + common)
    if common_t:
        say(f"training set: {common_t}")
    elif train:
        say(f"training set: none: {train[0]['note']}")
    for extra, mark in marks.items():
        say(f"{mark} {extra}")


def _print_paper(rows) -> None:
    print("Feature Collapse (Laurent, von Brecht, Bresson): the paper, the theorems and the certified optima")
    for name in dict.fromkeys(r["preset"] for r in rows):
        _print_preset(name, [r for r in rows if r["preset"] == name])
    print()
    say(
        "paper: the paper's number (nb: the authors' notebook run; notes: the derivation notes). theorem: Theorem 1, "
        "2 or 3 at the preset's sizes; in parentheses its error against the exact optimum where it is used outside "
        "its hypotheses (a partial latent set). exact optimum: the certified minimiser of the population risk on "
        "the preset's own latent set. training set: the certified minimiser of the training objective of the "
        "preset's own training sentences (what its trained network minimised). --json gives every number with its "
        "provenance."
    )


__all__ = ["register", "run", "paper_rows"]
