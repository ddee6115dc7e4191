"""Your own network against the theory: :func:`diagnose`, task files and weight loading.

* :func:`diagnose` → :class:`Diagnosis` — exact (or Monte-Carlo) true risk, gradient norm, the
  applicable theorem and why it may not apply, collapse distances, norms, spectra, cosines;
  ``.to_dict()``, ``.to_frame()``, ``.plot(dir)``, ``.report(dir)``;
* :func:`applicable_theorem` → :class:`TheoryVerdict`;
* :func:`monte_carlo_risk` → :class:`MonteCarloRisk` — unbiased estimate with a confidence interval;
* task files (:func:`load_task`, :func:`save_task`), latent variables and word frequencies from
  files (:func:`load_latent`, :func:`load_frequencies`), run directories (:func:`load_run`,
  :func:`save_run`), state_dicts (:func:`weights_from_state_dict`, :func:`load_weights`).

The package is ``fctheory.diagnosis``; the top-level ``fctheory.diagnose`` is the function (as
``fctheory.train`` is the trainer's function and ``fctheory.trainer`` its package).
"""

from ..risk.io import load_weights, weights_from_state_dict
from .core import Diagnosis, TheoryVerdict, applicable_theorem, diagnose
from .files import (
    RunFiles,
    load_frequencies,
    load_latent,
    load_run,
    load_task,
    save_run,
    save_task,
    task_from_dict,
    task_to_dict,
)
from ..risk.montecarlo import MonteCarloRisk, monte_carlo_risk

__all__ = [
    "diagnose",
    "Diagnosis",
    "applicable_theorem",
    "TheoryVerdict",
    "monte_carlo_risk",
    "MonteCarloRisk",
    "load_task",
    "save_task",
    "task_to_dict",
    "task_from_dict",
    "load_latent",
    "load_frequencies",
    "load_run",
    "save_run",
    "RunFiles",
    "load_weights",
    "weights_from_state_dict",
]
