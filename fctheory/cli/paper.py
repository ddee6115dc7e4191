"""The main job's table (``fctheory predict --paper``): for each quantity of each of the paper's presets, the
paper's number, the theorem's and the project's best, each with its provenance.

Every row is ``{"preset", "key", "quantity", "setting", "answers": [...]}``; every answer is
``{"source", "value", "provenance", "error", "note"}`` (:func:`answer`), so a new kind of answer (a sample
average, the training-set optimum) is one more entry of the list, never a new column of the schema.

* ``source``: ``paper`` or ``notebook`` (reported numbers), ``theorem`` (Theorem 1, 2 or 3 at the preset's
  sizes), ``exact optimum`` (the certified optimum of the preset's own latent set).
* ``provenance``: ``reported``; ``theorem`` (the theorem holds for this task: exact); ``exact`` (a closed form
  that holds on the preset's own latent set); ``exact certified`` (a certified minimiser: ``error`` is its
  certified relative gap on the minimised risk); ``approximation`` (a formula used outside its hypotheses:
  ``error`` is its relative error against the row's exact answer, the largest over the entries, or null where no
  exact answer exists); ``none`` (no such number yet: ``value`` is null and ``note`` says why).

The exact optima of fig3 and k50 (network h, uniform words: :func:`fctheory.collapsed_optimum`) and of fig4c
(network h*: :func:`fctheory.collapsed_optimum_star`, certified among feature-collapsed networks) take 10–40 s
together, so the table reads their certificates from ``paper_optima.json`` beside this module, written by
``python -m fctheory.cli.paper --write``; each stored result carries the SHA-256 of its latent set, and a preset
whose latent set this installation draws differently gets no stored answer (``--recompute`` solves them now).
fig4a and fig4b (Zipf words, network h, K = 1000 of 3^15) have no certified population optimum yet: no collapsed
reduction (the words of a concept are not exchangeable), and enumeration would take 400^15 sentences per class.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .._validate import check_mu
from .._version import __version__
from ..io.json import to_json
from ..io.sentences import training_sentences
from ..io.tasks import task_fingerprint
from ..optima import certify, collapsed_optimum, collapsed_optimum_star, optimum
from ..theorems import predict_type1, predict_type2
from ..trainer.presets import get_preset
from ..type3 import lambda_max_type3
from ._optima import summary_h, summary_star

__all__ = ["STORE", "answer", "best_answers", "compute_best", "main", "paper_rows", "stored_best"]

#: the stored certificates of the presets' optima (package data)
STORE = Path(__file__).with_name("paper_optima.json")
#: the presets with a certified optimum, and how each is computed
SOLVED = {"fig3": "collapsed_optimum", "k50": "collapsed_optimum", "fig4c": "collapsed_optimum_star"}
#: why the others have none
UNSOLVED = (
    "no certified population optimum yet: Zipf words at K = {K} of {n_c}^{L} have no collapsed reduction (the words "
    "of a concept are not exchangeable) and enumeration would take {s_c}^{L} sentences per class"
)
#: what recomputes a preset's stored optimum, by method
RECOMPUTE = {
    "collapsed_optimum": "fctheory optimum --preset {name}",
    "collapsed_optimum_star": "fctheory optimum --preset {name} --collapsed",
}
PROVENANCES = ("reported", "theorem", "exact", "exact certified", "approximation", "none")
#: the presets whose training-set optimum is stored: the certified global minimiser of the training objective of
#: the sentences their trainer drew (what the trained network minimised), ``--write --training-sets``
TRAINING = ("fig3", "k50", "fig4b")
#: the certified relative gap a stored training-set optimum must meet
TRAINING_TOL = 1e-8
#: the trained networks' numbers this project recorded (docs/partial-tasks.md: the presets trained to the end)
RECORDED_W = {"fig4a": (0.62165, 0.768), "fig4b": (0.34362, 0.845)}


def answer(source: str, value, provenance: str, error=None, note: str = "") -> dict:
    """One answer of a row (see the module docstring); ``value`` a number, a list of numbers or None."""
    if provenance not in PROVENANCES:
        raise ValueError(f"provenance must be one of {PROVENANCES}, got {provenance!r}")
    if isinstance(value, np.ndarray):
        value = [float(v) for v in value]
    elif value is not None and not isinstance(value, list):
        value = float(value)
    return {"source": source, "value": value, "provenance": provenance, "error": error, "note": note}


# ----------------------------------------------------------------------------- the presets' certified optima
def compute_best(name: str, *, quick: bool = False) -> dict | None:
    """Solve the preset's certified optimum now (None where the project has none): its summary, the method, the
    latent set's fingerprint and λ."""
    if name not in SOLVED:
        return None
    p = get_preset(name, quick=quick)
    task = p.task()
    if p.layernorm:
        out = summary_star(task, collapsed_optimum_star(task, lam=p.lam_U, d=p.d))
        out["d"] = p.d
    else:
        res = collapsed_optimum(task, lam=p.lam_U)
        out = summary_h(task, res, p.lam_U)
        out.update(lambda0=float(res.lambda0), word_norms=None, norms_by_rank=None)
    out.update(method=SOLVED[name], lam=p.lam_U, latent_set_sha256=task_fingerprint(task))
    return {k: v for k, v in out.items() if v is not None}


def stored_best(name: str, store: Path | None = None) -> dict | None:
    """The stored certificate of the preset's optimum, or None (none stored, or for another latent set)."""
    store = STORE if store is None else store
    if name not in SOLVED or not store.is_file():
        return None
    entry = json.loads(store.read_text(encoding="utf-8"))["presets"].get(name)
    if entry is None or entry["latent_set_sha256"] != task_fingerprint(get_preset(name).task()):
        return None
    return dict(entry, stored=True)


def compute_training(name: str, weights=None, *, quick: bool = False) -> dict:
    """The certified optimum of the preset's own training sentences (drawn from its seed, as the trainer draws
    them): solved now, or ``weights`` = (W, U) of a solved one, certified again at those weights (no solve)."""
    p = get_preset(name, quick=quick)
    task = p.task()
    S, y = training_sentences(task, n_spl=p.n_spl, seed=p.seed)
    if weights is None:
        res = optimum(task, lam=p.lam_U, data=(S, y), tol=TRAINING_TOL, max_seconds=7200)
    else:
        W, U = (np.asarray(a, dtype=np.float64) for a in weights)
        c = certify(task, W, U, lam=p.lam_U, data=(S, y), solve=False)
        res = SimpleNamespace(W=W, U=U, R=c.R, lower_bound=c.lower_bound, gap=c.gap, rel_gap=c.rel_gap,
                              certified=c.rel_gap <= TRAINING_TOL, width=c.rank, message=c.message,
                              seconds=c.seconds)  # fmt: skip
    out = summary_h(task, res, p.lam_U)
    w = out.pop("word_norms")
    out.pop("norms_by_rank", None)
    out.update(method="training_optimum", lam=p.lam_U, latent_set_sha256=task_fingerprint(task), n_spl=p.n_spl,
               seed=p.seed, N=int(len(y)), word_norm_std=float(np.std(w)),
               sigma_W=np.linalg.svd(res.W, compute_uv=False)[:10])  # fmt: skip
    return out


def stored_training(name: str, store: Path | None = None) -> dict | None:
    """The stored training-set optimum of the preset, or None (none stored, or for other sentences)."""
    store = STORE if store is None else store
    if name not in TRAINING or not store.is_file():
        return None
    entry = json.loads(store.read_text(encoding="utf-8")).get("training_sets", {}).get(name)
    p = get_preset(name)
    if entry is None or entry["latent_set_sha256"] != task_fingerprint(p.task()) or entry["seed"] != p.seed:
        return None
    return dict(entry, stored=True)


def best_answers(*, recompute: bool = False) -> dict:
    """{preset: its optimum's summary or None}: stored certificates, or solved now with ``recompute``."""
    return {name: (compute_best(name) if recompute else stored_best(name)) for name in ("fig3", "k50", "fig4c")}


def write_store(path: Path, *, training=(), weights: Path | None = None) -> dict:
    """Solve every preset's optimum and write the certificates to ``path`` (``python -m fctheory.cli.paper``);
    with ``training`` (preset names of :data:`TRAINING`) also their training-set optima (minutes each;
    ``weights``: a folder of ``<preset>.optimum.npz`` (W, U) already solved, certified again here); the other
    stored training-set optima are kept."""
    presets = {name: to_json(compute_best(name)) for name in SOLVED}
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    train = dict(old.get("training_sets", {}))
    for name in training:
        f = None if weights is None else Path(weights) / f"{name}.optimum.npz"
        w = None
        if f is not None and f.is_file():
            with np.load(f) as z:
                w = (z["W"], z["U"])
        train[name] = to_json(compute_training(name, w))
    data = {
        "generated_by": "python -m fctheory.cli.paper --write" + "".join(f" --training-sets {n}" for n in training),
        "fctheory_version": __version__,
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}",
        "presets": presets,
        "training_sets": train,
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


# ----------------------------------------------------------------------------- the rows
def _rel_error(approx, exact):
    """Largest relative error of ``approx`` (a number) against ``exact`` (a number or a list), or None."""
    if exact is None or approx is None:
        return None
    ex = np.atleast_1d(np.asarray(exact, dtype=np.float64))
    if not np.all(np.isfinite(ex)) or np.any(ex == 0):
        return None
    return float(np.max(np.abs(float(approx) - ex) / np.abs(ex)))


def _best(best, key, provenance_note):
    """The row's answer from the preset's optimum (a field of its summary, or a callable of it)."""
    if best is None:
        return answer("exact optimum", None, "none", None, provenance_note)
    value = key(best) if callable(key) else best[key]
    stored = "stored certificate" if best.get("stored") else "solved now"
    where = RECOMPUTE[best["method"]].format(name=best["_name"])
    note = (
        f"{best['method']} of the preset's latent set: certified relative gap {best['rel_gap']:.1e} on min R "
        f"({stored}; recompute: {where})"
    )
    if best["method"] == "collapsed_optimum_star":
        note += "; certified among feature-collapsed networks (a non-collapsed h* is not excluded on a partial task)"
    return answer("exact optimum", value, "exact certified", float(best["rel_gap"]), note)


def _theorem(value, full: bool, exact, law: str):
    """The theorem's number: exact where it holds (a full latent set), else an approximation with its error."""
    if full:
        return answer("theorem", value, "theorem", 0.0, f"{law}: holds on the full latent set")
    return answer(
        "theorem",
        value,
        "approximation",
        _rel_error(value, exact.get("value") if exact else None),
        f"{law} used on a partial latent set (it assumes K = n_c^L); error against the exact optimum",
    )


def _row(preset, key, quantity, setting, answers) -> dict:
    return {"preset": preset, "key": key, "quantity": quantity, "setting": setting, "answers": answers}


def _pca(key, i):
    return lambda b: b[key][i]


def _rows_of(preset, task, setting, specs, best) -> list:
    """Rows of one preset from (key, quantity, reported, theorem value, law, best field, best note) specs."""
    rows = []
    why = UNSOLVED.format(K=task.K, n_c=task.n_c, L=task.L, s_c=task.s_c)
    full = task.is_full
    for key, quantity, reported, value, law, field, extra in specs:
        ex = _best(best, field, why) if field is not None else None
        if ex is not None and extra:
            ex["note"] += f"; {extra}"
        answers = [answer(src, v, "reported", None, note) for src, v, note in reported]
        answers.append(law(value, ex) if callable(law) else _theorem(value, full, ex, law))
        answers.append(ex)
        rows.append(_row(preset, key, quantity, setting, answers))
    return rows


def _setting(p, task) -> str:
    law = "uniform" if task.is_uniform else p.mu
    return f"K={task.K} of {task.n_c}^{task.L}, {law}, {'h*' if p.layernorm else 'h'}, n_spl={p.n_spl}"


def _uniform_h_rows(name, best, quick) -> list:
    """fig3 and k50: network h, uniform words (Theorem 1; the collapsed optimum of the latent set)."""
    p = get_preset(name, quick=quick)
    task = p.task()
    t1 = predict_type1(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=p.lam_U)
    paper = not quick
    trained = f"the population optimum; the trained network saw {p.n_spl} sentences per class"
    if name == "fig3":
        specs = [
            ("word_norm", "||w|| per concept", [("paper", 1.42214, "section 3")] * paper,
             t1.c, "Theorem 1", "concept_norms", ""),
            ("word_norm_trained", "mean ||w|| (trained network)", [("paper", 1.41, "experiment (std 0.13)")] * paper,
             t1.c, "Theorem 1", "word_norm_mean", trained),
            ("pca_W_1", "PCA sigma_1 of W", [("paper", 34.9, "figure 3"), ("notebook", 35.05, "run")] * paper,
             t1.pca_sigma, "Theorem 1", _pca("pca_W", 0), trained),
            ("pca_W_2", "PCA sigma_2 of W", [("paper", 34.7, "figure 3")] * paper, t1.pca_sigma, "Theorem 1",
             _pca("pca_W", 1), trained),
            ("pca_U_1", "PCA sigma_1 of u_kl", [("paper", 34.9, "figure 3")] * paper, t1.pca_sigma, "Theorem 1",
             _pca("pca_U", 0), trained),
            ("pca_U_2", "PCA sigma_2 of u_kl", [("paper", 34.6, "figure 3")] * paper, t1.pca_sigma, "Theorem 1",
             _pca("pca_U", 1), trained),
            ("u_norm", "mean ||u_kl||", [("notebook", 0.40, "plot radius")] * paper,
             t1.c_prime, "Theorem 1", "u_norm_mean", trained),
            ("ce", "cross-entropy at the optimum",
             [("notebook", 0.5131, "final train CE")] * paper, t1.ce, "Theorem 1", "ce", trained),
        ]  # fmt: skip
    else:
        specs = [
            ("word_norm", "||w|| per concept", [("paper", 0.61602, "section 3")] * paper,
             t1.c, "Theorem 1", "concept_norms", ""),
            ("word_norm_trained", "mean ||w|| (trained network)", [("paper", 0.61, "experiment (std 0.06)")] * paper,
             t1.c, "Theorem 1", "word_norm_mean", trained),
        ]  # fmt: skip
    specs.append(("R", "min R of (5)", [], t1.risk, "Theorem 1", "R", ""))
    rows = _rows_of(name, task, _setting(p, task), specs, _named(best, name))
    if name == "fig3":
        rows.append(_initial_loss(name, _setting(p, task), task, t1.H0, paper))
    return rows


def _initial_loss(name, setting, task, H0, paper) -> dict:
    """H(0): R at the origin is log K on every latent set (exact); Theorem 1's H(0) is that only on a full set."""
    exact = answer("exact optimum", math.log(task.K), "exact", 0.0, "R at the origin is log K on every latent set")
    theorem = _theorem(H0, task.is_full, exact, "Theorem 1")
    return _row(
        name,
        "H0",
        "initial loss H(0)",
        setting,
        [answer("notebook", 6.908, "reported", None, "run")] * paper + [theorem, exact],
    )


def _star_rows(name, best, quick) -> list:
    """fig4c: network h* (Theorem 3; the best feature-collapsed h* of the latent set)."""
    p = get_preset(name, quick=quick)
    task = p.task()
    t3 = predict_type2(n_c=task.n_c, L=task.L, K=task.K, d=p.d, lam=p.lam_U, n_w=task.n_w)
    paper = not quick
    specs = [
        ("tau_star", "tau* = ||U||_F", [("notes", 11.94703, "derivation notes")] * paper, t3.tau_star,
         "Theorem 3", "tau", ""),
        ("u_norm", "mean ||u_kl||", [("notes", 0.09755, "derivation notes")] * paper, t3.c,
         "Theorem 3", "u_norm_mean", ""),
        ("pca_U_1", "PCA sigma_1 of U", [("notebook", 8.387, "run")] * paper, t3.pca_sigma_U,
         "Theorem 3", _pca("pca_U", 0), ""),
        ("pca_phiW_1", "PCA sigma_1 of phi(W)", [("notebook", 238.7, "run, eps = 1e-5")] * paper,
         t3.pca_sigma_phiW, "Theorem 3", _pca("pca_phiW", 0), ""),
        ("ce", "cross-entropy at the optimum",
         [("notebook", 0.01675, "final train CE")] * paper, t3.ce, "Theorem 3", "ce", ""),
        ("R", "min R* of (10)", [], t3.risk, "Theorem 3", "R", ""),
    ]  # fmt: skip
    return _rows_of(name, task, _setting(p, task), specs, _named(best, name))


def _zipf_rows(name, quick) -> list:
    """fig4a, fig4b: network h, Zipf words. Theorem 2 (type III) needs the full set and lambda < lambda_max."""
    p = get_preset(name, quick=quick)
    task = p.task()
    lmax = lambda_max_type3(mu=check_mu("zipf", task.s_c), n_c=task.n_c, L=task.L)
    paper = not quick
    origin = (
        f"Theorem 2 (type III) on the full latent set: at lambda = {p.lam_U:g} >= lambda_max = {lmax:.4g} its only "
        "type-III critical point is the origin"
    )

    def type3(value, ex):
        if p.lam_U < lmax:
            return answer("theorem", None, "none", None, "Theorem 2 predicts no spectrum in closed form here")
        return answer("theorem", value, "approximation", None, origin + "; error unknown (no exact answer)")

    def lmax_law(value, ex):
        return answer("theorem", value, "theorem", 0.0, "condition (9) of Theorem 2, for K = n_c^L and these mu")

    nb = {"fig4a": (24.24, 24.34), "fig4b": (19.14, 19.19)}.get(name, (None, None))
    specs = [
        ("lambda_max", "lambda_max of (9)", [("notes", 1.1515e-4, "derivation notes")]
         * paper, lmax, lmax_law, "lambda_max", ""),
        ("word_norm_trained", "mean ||w|| (trained network)",
         [("project run", RECORDED_W[name][0], f"this project's {p.epochs}-epoch run (std {RECORDED_W[name][1]})")]
         * (paper and name in RECORDED_W), 0.0, type3, "word_norm_mean", ""),
        ("pca_W_1", "PCA sigma_1 of W", [("notebook", nb[0], "run")] * paper, 0.0, type3, "pca_W", ""),
        ("pca_U_1", "PCA sigma_1 of u_kl", [("notebook", nb[1], "run")] * paper, 0.0, type3, "pca_U", ""),
    ]  # fmt: skip
    return _rows_of(name, task, _setting(p, task), specs, None)


#: rows that a training-set optimum answers: row key -> its field (or a function of the stored summary)
TRAINING_FIELDS = {
    "word_norm_trained": "word_norm_mean",
    "pca_W_1": _pca("pca_W", 0),
    "pca_W_2": _pca("pca_W", 1),
    "pca_U_1": _pca("pca_U", 0),
    "pca_U_2": _pca("pca_U", 1),
    "u_norm": "u_norm_mean",
    "ce": "ce",
}


def _training_answer(name: str, train: dict | None, field, key: str) -> dict:
    """The row's answer from the preset's training-set optimum (stored), or why there is none."""
    if train is None:
        why = ("not stored: fig4a's 500,000 training sentences need `fctheory optimum --data` on blocks (a Dask "
               "cluster)" if name == "fig4a" else
               "not stored (python -m fctheory.cli.paper --write --training-sets solves it, minutes)")  # fmt: skip
        return answer("training-set optimum", None, "none", None, why)
    value = field(train) if callable(field) else train[field]
    note = (
        f"certified global minimiser of the training objective of the preset's own {train['N']:,} training sentences "
        f"(seed {train['seed']}): what the trained network minimised; width {train['width']}"
    )
    if key == "word_norm_trained":
        note += f"; spread (std) {train['word_norm_std']:.4g}"
    return answer("training-set optimum", value, "exact certified", float(train["rel_gap"]), note)


def _add_training(rows: list, name: str, train: dict | None) -> list:
    """Append the training-set optimum's answer to the rows it answers (every row for a stored optimum; only
    the trained network's word norm otherwise, to say why it is missing)."""
    for row in rows:
        field = TRAINING_FIELDS.get(row["key"])
        if field is not None and (train is not None or row["key"] == "word_norm_trained"):
            row["answers"].append(_training_answer(name, train, field, row["key"]))
    return rows


def _named(best, name):
    b = (best or {}).get(name)
    return None if b is None else dict(b, _name=name)


def paper_rows(best=None, *, quick: bool = False) -> list:
    """Every row of the main job's table, preset by preset (fig3, k50, fig4c, fig4a, fig4b).

    ``best``: {preset: summary} of the presets' optima (:func:`best_answers`; default: the stored certificates).
    ``quick``: the presets' seconds-long versions (no paper numbers: the paper reports the full ones).
    """
    best = best_answers() if best is None and not quick else (best or {})
    train = {} if quick else {name: stored_training(name) for name in TRAINING}
    rows = []
    for name in ("fig3", "k50"):
        rows += _add_training(_uniform_h_rows(name, best, quick), name, None if quick else train.get(name))
    rows += _star_rows("fig4c", best, quick)
    for name in ("fig4a", "fig4b"):
        rows += _zipf_rows(name, quick) if quick else _add_training(_zipf_rows(name, quick), name, train.get(name))
    return rows


def main(argv=None) -> int:
    """``python -m fctheory.cli.paper --write``: solve the presets' optima and store their certificates."""
    ap = argparse.ArgumentParser(prog="python -m fctheory.cli.paper", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"solve fig3, k50 and fig4c now and write {STORE.name}")
    ap.add_argument("--out", type=Path, default=None, help="where to write (default: the package's own file)")
    ap.add_argument(
        "--training-sets",
        nargs="*",
        choices=TRAINING,
        default=None,
        metavar="PRESET",
        help=f"also the certified optima of these presets' training sentences (default with the option: "
        f"{', '.join(TRAINING)}; minutes each)",
    )
    ap.add_argument(
        "--weights",
        type=Path,
        default=None,
        help="a folder of <preset>.optimum.npz (W, U) already solved: certified again instead of solved",
    )
    args = ap.parse_args(argv)
    if not args.write:
        ap.print_help()
        return 0
    out = STORE if args.out is None else args.out
    training = () if args.training_sets is None else (tuple(args.training_sets) or TRAINING)
    data = write_store(out, training=training, weights=args.weights)
    for name, entry in data["presets"].items():
        print(f"{name}: {entry['method']}, rel. gap {entry['rel_gap']:.1e}, {entry['seconds']:.1f} s")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover - the maintainers' command
    sys.exit(main())
