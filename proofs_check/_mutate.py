"""Planting a bug in the library for the duration of a ``with`` block (``--self-test``'s library mutants).

A library mutant is a textual edit of one function's source, exactly what a careless edit of the file
would do. :func:`source_edit` compiles the edited module source and swaps the new code object into the
*existing* function object (``fn.__code__``), so every reference to the function — ``fctheory.H``,
``fctheory.tau.H``, ``from .tau import H as _H`` in another module, a ``@public`` wrapper — runs the
mutated code, and the swap is undone on exit. Methods and property getters are found by qualified name.

numba kernels cannot have their code swapped: :func:`numba_edit` executes the edited kernel module
(``cache=False``) in a fresh namespace and rebinds the named dispatchers in the original module (the
library imports its kernels at call time, ``from ._kernels import tau_direct`` inside the function).
"""

from __future__ import annotations

import importlib
import inspect
import types
from contextlib import contextmanager


class StaleMutant(RuntimeError):
    """The text a mutant edits is no longer in the library (the mutant must be updated)."""


def _resolve(module, qualname: str):
    """The plain function object ``module.<qualname>`` (unwrapping decorators, property getters)."""
    obj = module
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        nxt = obj.__dict__[part] if isinstance(obj, type) and part in obj.__dict__ else getattr(obj, part)
        if isinstance(nxt, property):
            nxt = nxt.fget
        elif isinstance(nxt, (staticmethod, classmethod)):
            nxt = nxt.__func__
        obj = nxt
    seen = 0
    while hasattr(obj, "__wrapped__") and seen < 10:  # @public / functools.wraps wrappers
        obj = obj.__wrapped__
        seen += 1
    if not isinstance(obj, types.FunctionType):
        raise StaleMutant(f"{module.__name__}.{qualname} is not a Python function ({type(obj).__name__})")
    return obj


def _find_code(code: types.CodeType, qualname: str):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            hit = _find_code(const, qualname)
            if hit is not None:
                return hit
    return None


def _edit(text: str, old: str, new: str, where: str, occurrence: int | None):
    n = text.count(old)
    if n == 0 or (occurrence is None and n != 1) or (occurrence is not None and occurrence >= n):
        raise StaleMutant(
            f"{where}: expected {'one' if occurrence is None else f'>{occurrence}'} occurrence of {old!r}, found {n}"
        )
    k = occurrence or 0
    pos = -1
    for _ in range(k + 1):
        pos = text.index(old, pos + 1)
    return text[:pos] + new + text[pos + len(old) :]


def holds(module_name: str, qualname: str, old: str) -> bool:
    """Whether the source of ``module_name.qualname`` contains ``old``."""
    try:
        fn = _resolve(importlib.import_module(module_name), qualname)
        return old in "".join(inspect.getsourcelines(fn)[0])
    except (AttributeError, KeyError, OSError, TypeError, StaleMutant):
        return False


@contextmanager
def source_edit(module_name: str, qualname: str, old: str, new: str, occurrence: int | None = None, *, more=()):
    """Run the block with ``old`` replaced by ``new`` in the source of ``module_name.qualname``.

    ``old`` must occur exactly once in that function (or give ``occurrence``, 0-based); otherwise
    :class:`StaleMutant` is raised before anything is changed. ``more``: further ``(old, new)`` edits
    of the same function, applied in order.
    """
    module = importlib.import_module(module_name)
    fn = _resolve(module, qualname)
    path = inspect.getsourcefile(fn)
    with open(path, encoding="utf-8") as fh:
        full = fh.read()
    lines, start = inspect.getsourcelines(fn)
    body = "".join(lines)
    head = "".join(full.splitlines(keepends=True)[: start - 1])
    if not full.startswith(head) or full[len(head) : len(head) + len(body)] != body:
        raise StaleMutant(f"{module_name}.{qualname}: source on disk differs from the loaded module (reload needed)")
    body2 = _edit(body, old, new, f"{module_name}.{qualname}", occurrence)
    for o, n in more:
        body2 = _edit(body2, o, n, f"{module_name}.{qualname}", None)
    src = head + body2 + full[len(head) + len(body) :]
    code = _find_code(compile(src, path, "exec", dont_inherit=True), fn.__code__.co_qualname)
    if code is None or code.co_freevars != fn.__code__.co_freevars:
        raise StaleMutant(f"{module_name}.{qualname}: cannot rebuild the edited code object")
    saved = fn.__code__
    fn.__code__ = code
    try:
        yield
    finally:
        fn.__code__ = saved


@contextmanager
def numba_edit(module_name: str, names, old: str, new: str, occurrence: int | None = None):
    """Run the block with the numba dispatchers ``names`` of ``module_name`` rebuilt from edited source."""
    module = importlib.import_module(module_name)
    path = inspect.getsourcefile(module)
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    src = _edit(src, old, new, module_name, occurrence).replace("cache=True", "cache=False")
    scratch = types.ModuleType(module_name + "_mutant")
    scratch.__package__ = module.__package__
    scratch.__file__ = path
    exec(compile(src, path + " (mutant)", "exec", dont_inherit=True), scratch.__dict__)  # noqa: S102
    saved = {n: getattr(module, n) for n in names}
    for n in names:
        setattr(module, n, getattr(scratch, n))
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(module, n, v)


@contextmanager
def attribute(module_name: str, name: str, value):
    """Run the block with ``module_name.name`` set to ``value`` (a module-level constant read at call time)."""
    module = importlib.import_module(module_name)
    if not hasattr(module, name):
        raise StaleMutant(f"{module_name}.{name} does not exist")
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)
