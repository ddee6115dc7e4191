"""The paper's experiments as presets (derivations A.2; the printed table there is garbled:
the weight decays are 1e-3 and fig4c has λ_W = 0).

Common setting: n_c = 3, s_c = 400 (n_w = 1200), L = 15, K = 1000, d = 100, SGD lr 0.1, batch 100,
initialisation = PyTorch default / 1000, LayerNorm eps 1e-5. ``k50`` is the second example of
section 3 (K = 50, n_spl = 100, uniform words). The ``quick`` variants keep the structure (word law,
network, which weights decay) on a tiny task so that they reach 100% training accuracy in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._validate import Bool, Choice, Instance, Int, Real, public, public_class
from ..task import Task

__all__ = ["Preset", "PRESETS", "get_preset"]


@dataclass(frozen=True)
class Preset:
    """A named experiment: task shape, network, optimiser and the numbers to compare with."""

    name: str
    description: str
    n_c: int = 3
    s_c: int = 400
    L: int = 15
    K: int = 1000
    mu: str = "uniform"
    d: int = 100
    n_spl: int = 5
    layernorm: bool = False
    lam_W: float = 1e-3
    lam_U: float = 1e-3
    lr: float = 0.1
    batch: int = 100
    epochs: int = 100
    eval_every: int = 10
    init_scale: float = 1e-3
    eps: float = 1e-5
    seed: int = 0

    @public()
    def task(self) -> Task:
        """The K latent variables, drawn uniformly (distinct) from a stream of ``seed``."""
        return Task.random(self.n_c, self.s_c, self.L, self.K, mu=self.mu, seed=np.random.default_rng([self.seed, 0]))

    @public()
    def train_kwargs(self) -> dict:
        """Keyword arguments of :func:`fctheory.train` for this preset (network, optimiser, seed)."""
        return dict(
            layernorm=self.layernorm,
            eps=self.eps,
            lr=self.lr,
            batch=self.batch,
            epochs=self.epochs,
            lam_W=self.lam_W,
            lam_U=self.lam_U,
            seed=self.seed,
            init_scale=self.init_scale,
            eval_every=self.eval_every,
        )


Preset.__init__ = public(
    name=Instance(str),
    description=Instance(str),
    n_c=Int(min=2, max=10**6),
    s_c=Int(min=1, max=10**7),
    L=Int(min=1, max=10**4),
    K=Int(min=1, max=10**7),
    mu=Choice("uniform", "zipf"),
    d=Int(min=1, max=2**31),
    n_spl=Int(min=1, max=10**12),
    layernorm=Bool(),
    lam_W=Real(lo=0.0),
    lam_U=Real(lo=0.0),
    lr=Real(lo=0.0, lo_open=True),
    batch=Int(min=1, max=2**40),
    epochs=Int(min=0, max=10**12),
    eval_every=Int(min=1),
    init_scale=Real(lo=0.0, lo_open=True, hi=1e6),
    eps=Real(lo=0.0),
    seed=Int(min=0, max=2**63 - 1),
)(Preset.__init__)
public_class(Preset)

_FULL = {
    "fig3": Preset("fig3", "uniform words, network h, n_spl = 5 (paper figure 3)", epochs=1200, eval_every=100),
    "fig4a": Preset(
        "fig4a", "Zipf words, network h, n_spl = 500 (figure 4a)", mu="zipf", n_spl=500, epochs=10, eval_every=1
    ),
    "fig4b": Preset("fig4b", "Zipf words, network h, n_spl = 5 (figure 4b)", mu="zipf", epochs=3000, eval_every=100),
    "fig4c": Preset(
        "fig4c",
        "Zipf words, network h* (LayerNorm), λ_W = 0, n_spl = 5 (figure 4c)",
        mu="zipf",
        layernorm=True,
        lam_W=0.0,
        epochs=500,
        eval_every=50,
    ),
    "k50": Preset(
        "k50",
        "uniform words, network h, K = 50, n_spl = 100 (section 3, second example)",
        K=50,
        n_spl=100,
        epochs=1000,
        eval_every=100,
    ),
}

# tiny versions: same structure, n_c = 3, s_c = 8, L = 5, d = 12
_QUICK_SHAPE = dict(s_c=8, L=5, d=12, K=40, batch=20, init_scale=0.1, lr=0.5)
_QUICK = {
    "fig3": replace(_FULL["fig3"], **_QUICK_SHAPE, epochs=150, eval_every=10),
    "fig4a": replace(_FULL["fig4a"], **_QUICK_SHAPE, n_spl=50, epochs=15, eval_every=1),
    "fig4b": replace(_FULL["fig4b"], **_QUICK_SHAPE, epochs=200, eval_every=10),
    "fig4c": replace(_FULL["fig4c"], **_QUICK_SHAPE, epochs=100, eval_every=10),
    "k50": replace(_FULL["k50"], **{**_QUICK_SHAPE, "K": 10}, n_spl=20, epochs=150, eval_every=10),
}

PRESETS = tuple(_FULL)


@public(name=Choice(*PRESETS), quick=Bool(), legacy_positional=("quick",))
def get_preset(name: str, *, quick: bool = False) -> Preset:
    """The preset ``name`` ∈ {fig3, fig4a, fig4b, fig4c, k50}; ``quick`` gives the seconds-long version."""
    return (_QUICK if quick else _FULL)[name]
