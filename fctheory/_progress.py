"""The library's tqdm bars: one place that decides whether a bar is shown and loads tqdm only then."""

from __future__ import annotations

import sys

__all__ = ["progress_bar", "show_by_default"]


def show_by_default(progress) -> bool:
    """``progress`` as given, or (None) whether stderr is a terminal: a bar in a shell, none in logs and tests."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(progress)


def progress_bar(show: bool, total: int, unit: str, desc: str):
    """A tqdm bar of ``total`` steps, or None when not shown."""
    if not show:
        return None
    from tqdm.auto import tqdm  # noqa: PLC0415 - optional progress bar, loaded when shown

    return tqdm(total=total, unit=unit, desc=desc, leave=False)
