"""matplotlib on the Agg backend, imported lazily: the one import every figure-drawing module uses."""

from __future__ import annotations

from ._validate import fail

__all__ = ["pyplot"]


def pyplot(name: str = "out", value="figures"):
    """``matplotlib.pyplot`` with the Agg backend (files only, no display needed).

    Without matplotlib (an optional extra) the request is refused with FCTheoryError naming ``name``.
    """
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the install
        fail(name, value, f"plotting needs matplotlib (pip install 'fctheory[plot]'): {exc}")
    return plt
