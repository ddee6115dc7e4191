"""Sweeps and phase diagrams: a grid or random design over any target, on a process pool
or a Dask cluster, as a tidy resumable Parquet table, with built-in phase-diagram plots.

* :func:`sweep` — run a spec (TOML file, dict or :class:`SweepSpec`), skipping finished points;
* :func:`load_spec`, :class:`SweepSpec` — read and validate a spec (``fixed``, ``grid``, ``random``,
  ``seeds``, ``executor``, ``output``);
* :func:`read_table` — a sweep's table from its output folder;
* :func:`plot` — phase diagrams from a table (τ and λ₀ over (λ, K), type-III word norms over the
  Zipf exponent with the λ_max boundary, test accuracy and distance to collapse over n_spl);
* :data:`TARGETS` — the registered targets (any ``package.module:function`` works too).

See docs/sweeps.md.
"""

from .core import sweep
from .plots import KINDS, plot
from .spec import SweepSpec, load_spec
from .table import read_table
from .targets import TARGETS

__all__ = ["sweep", "load_spec", "SweepSpec", "read_table", "plot", "TARGETS", "KINDS"]
