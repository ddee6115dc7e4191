"""Versions of fctheory, Python and the packages fctheory uses, for the record of a result."""

from __future__ import annotations

import functools
import sys
from importlib import metadata

from .._validate import Bool, public
from .._version import __version__

__all__ = ["versions"]

#: always listed (``None`` when missing)
_REQUIRED = ("numpy", "scipy", "numba", "mpmath")
#: listed when installed
_OPTIONAL = ("pandas", "pyarrow", "hypothesis", "matplotlib", "torch", "safetensors", "dask", "cupy")


@functools.lru_cache(maxsize=1)
def _installed() -> tuple:
    # package metadata, not imports: listing torch or cupy costs nothing; cached because a sweep asks per unit
    out = []
    for name in _REQUIRED + _OPTIONAL:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            if name in _REQUIRED:
                out.append((name, None))
    return tuple(out)


@public(include_fctheory=Bool())
def versions(*, include_fctheory: bool = True) -> dict:
    """fctheory, Python and the installed versions of the packages fctheory uses.

    Keys, in order: ``fctheory`` (unless ``include_fctheory=False``), ``python``, then ``numpy``, ``scipy``,
    ``numba``, ``mpmath`` (always; ``None`` when not installed), then those of ``pandas``, ``pyarrow``,
    ``hypothesis``, ``matplotlib``, ``torch``, ``safetensors``, ``dask``, ``cupy`` that are installed.
    Versions come from the package metadata: nothing is imported. Returns a new dict on each call.
    """
    out = {"fctheory": __version__} if include_fctheory else {}
    out["python"] = sys.version.split()[0]
    out.update(_installed())
    return out
