"""The three validation settings of docs/finite-sample.md (λ = 1e-3, uniform words, network h)."""

import fctheory as fc
from fctheory.trainer.presets import get_preset


def _preset_task(name):
    return lambda: get_preset(name).task()


SETTINGS = {
    # the paper's figure 3: n_c=3, s_c=400, L=15, K=1000 random latent variables, d=100, n_spl=5
    "fig3": dict(task=_preset_task("fig3"), n_spl=5, d=100, lam=1e-3, lr=0.1, batch=100, epochs=1600, init_scale=1e-3),
    # section 3's second example: K=50, n_spl=100
    "k50": dict(task=_preset_task("k50"), n_spl=100, d=100, lam=1e-3, lr=0.1, batch=100, epochs=1000, init_scale=1e-3),
    # the small full task: n_c=3, s_c=40, L=6, K=3^6=729, d=32, n_spl=5
    "small": dict(
        task=lambda: fc.Task.full(3, 40, 6), n_spl=5, d=32, lam=1e-3, lr=0.2, batch=100, epochs=2500, init_scale=1e-3
    ),
}
