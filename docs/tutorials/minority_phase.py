"""The phase diagram of minority collapse in the regularised CE UFM (docs/ufm.md, "Minority collapse").

Fang et al.'s setting: K_maj = 4 majority classes of n_maj = 1000 samples, K_min = 6 minority classes of
n_min = n_maj/r. For every (r, λ) of a grid (λ_W = λ_H = λ) the certified optimum gives the minority
classifiers' spread (0: they coincide); the red line is the closed-form threshold r_ib(λ) of
:func:`fctheory.ufm.minority.minority_collapse_threshold`, grey the trivial region W = H = 0.

Run ``python docs/tutorials/minority_phase.py [out.png]`` (about a minute on one core); it writes
docs/tutorials/minority-phase.png by default.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from fctheory.ufm.minority import minority_phase_diagram

HERE = os.path.dirname(os.path.abspath(__file__))


def main(out=os.path.join(HERE, "minority-phase.png"), n_r=28, n_lam=22):
    t0 = time.perf_counter()
    D = minority_phase_diagram(
        K_maj=4,
        K_min=6,
        n_maj=1000,
        ratios=np.geomspace(1.0, 1000.0, n_r),
        lams=np.geomspace(3e-4, 3e-2, n_lam),
    )
    D.plot(out)
    print(f"{out}: {n_r} x {n_lam} certified optima in {time.perf_counter() - t0:.1f} s")
    return D


if __name__ == "__main__":
    main(*sys.argv[1:2])
