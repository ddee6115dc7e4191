"""``fctheory predict``: the predictors of Theorems 1–3 from the command line."""
from __future__ import annotations

import numpy as np

from .._validate import check_mu, fail
from ._table import dumps, table


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predictions of Theorems 1-3 (type I/II/III) or the paper's headline numbers",
        description="Print the theory's predictions for one setting, or with --paper the paper's "
        "headline settings next to the numbers the paper (and the authors' notebooks) report.",
    )
    p.add_argument("kind", nargs="?", choices=("type1", "type2", "type3"), help="which theorem's prediction")
    p.add_argument("--paper", action="store_true", help="reproduce the paper's headline numbers")
    p.add_argument("--nc", type=int, default=3, help="concepts n_c (default 3)")
    p.add_argument("--sc", type=int, default=None, help="words per concept s_c (default n_w/n_c, or 400)")
    p.add_argument("--nw", type=int, default=None, help="vocabulary size n_w = n_c*s_c (default 1200)")
    p.add_argument("--L", type=int, default=15, help="sentence length L (default 15)")
    p.add_argument("--K", type=float, default=None, help="classes K (default 1000; type3: n_c^L)")
    p.add_argument("--d", type=int, default=100, help="embedding dimension d (type2; default 100)")
    p.add_argument("--lam", type=float, default=1e-3, help="weight decay lambda (default 1e-3)")
    p.add_argument("--mu", default="uniform", help="type3 word frequencies: uniform, zipf, or comma-separated values")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _sizes(args):
    if args.nw is not None and args.sc is not None and args.nw != args.nc * args.sc:
        fail("--nw", args.nw, f"must equal n_c*s_c = {args.nc * args.sc}")
    if args.nw is not None:
        return args.nw
    return args.nc * (args.sc if args.sc is not None else 400)


def run(args) -> int:
    from .. import predict_type1, predict_type2, predict_type3

    if args.paper:
        rows = paper_rows()
        if args.json:
            print(dumps(rows))
        else:
            print("Feature Collapse (Laurent, von Brecht, Bresson): headline numbers, n_c=3, n_w=1200, L=15, lambda=1e-3")
            print(table([[r["quantity"], r["setting"], r["reported"], r["source"], r["ours"], r["rel_diff"]] for r in rows],
                        ["quantity", "setting", "reported", "source", "fctheory", "rel. diff"]))
        return 0
    if args.kind is None:
        fail("kind", None, "choose type1, type2 or type3 (or pass --paper)")
    if args.kind == "type1":
        K = 1000 if args.K is None else args.K
        pred = predict_type1(args.nc, _sizes(args), args.L, K, args.lam)
    elif args.kind == "type2":
        K = 1000 if args.K is None else args.K
        pred = predict_type2(args.nc, args.L, K, args.d, args.lam, n_w=_sizes(args))
    else:
        if args.mu in ("uniform", "zipf"):
            s_c = args.sc if args.sc is not None else _sizes(args) // args.nc
            mu = check_mu(args.mu, s_c)
        else:
            try:
                mu = np.array([float(v) for v in args.mu.split(",")])
            except ValueError:
                fail("--mu", args.mu, "must be uniform, zipf or comma-separated numbers")
            mu = check_mu(mu)
        pred = predict_type3(mu, args.nc, args.L, args.lam)
    d = pred.to_dict()
    if args.json:
        print(dumps({"kind": args.kind, **d}))
    else:
        print(table([[k, v] for k, v in d.items() if k != "mu"], ["quantity", "value"]))
    return 0


def paper_rows():
    """The paper's headline settings (section 3 and figures 3-4) with our predictions."""
    from .. import lambda_max_type3, predict_type1, predict_type2
    from .._validate import check_mu

    p1000 = predict_type1(3, 1200, 15, 1000, 1e-3)
    p50 = predict_type1(3, 1200, 15, 50, 1e-3)
    p2 = predict_type2(3, 15, 1000, 100, 1e-3, n_w=1200)
    lmax = lambda_max_type3(check_mu("zipf", 400), 3, 15)
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
        {"quantity": q, "setting": s, "reported": rep, "source": src, "ours": float(ours),
         "rel_diff": float(ours / rep - 1)}
        for q, s, rep, src, ours in rows
    ]


__all__ = ["register", "run", "paper_rows"]
