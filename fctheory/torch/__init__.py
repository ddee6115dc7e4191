"""PyTorch integration: watch neural collapse of your own network while it trains (needs PyTorch:
``pip install 'fctheory[torch]'``; ``import fctheory`` never imports it).

:class:`NCMonitor` accumulates the class statistics of the penultimate-layer features on their device
(a forward hook or explicit ``update`` calls), and per epoch writes NC1–NC4, norms and angles and the
distances to the regularised UFM optimum into a table (pandas/Parquet) and a figure. Under data-parallel
training (``torch.distributed``) it combines the processes' moments (:mod:`fctheory.torch.distributed`).

:class:`fctheory.torch.lightning.NCMonitorCallback` runs it inside a PyTorch Lightning ``Trainer.fit``
(``pip install 'fctheory[lightning]'``). It lives in its own module so that ``import fctheory.torch``
neither needs Lightning nor pays for importing it (several seconds).
"""

try:
    import torch as _torch  # noqa: F401 - fail early with the install hint
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("fctheory.torch needs PyTorch: pip install 'fctheory[torch]'") from exc

from .distributed import all_reduce_moments, rebase_moments, sync_active
from .monitor import NCMonitor
from .plots import plot_classes, plot_history

__all__ = [
    "NCMonitor",
    "all_reduce_moments",
    "plot_classes",
    "plot_history",
    "rebase_moments",
    "sync_active",
]
