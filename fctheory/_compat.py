"""The 0.x-compatibility shims of the ``@public`` decorator (see CHANGELOG.md, "API 1.0").

Two ways of calling a 0.x function still work, with a ``DeprecationWarning``:

* a renamed keyword (``renamed={"old": "new"}``): ``f(old=1)`` is ``f(new=1)``;
* positional arguments for parameters that became keyword-only (``legacy_positional=("a", "b")``): the
  extra positional arguments are mapped, in that order, after the remaining positional parameters.

Everything about the old call forms lives here, so that they can be found, and deleted at 2.0, in one
place (the other one is :func:`fctheory.task.task_first`, the ``f(W, U, task)`` argument order).
"""

from __future__ import annotations

import inspect
import warnings

from ._errors import FCTheoryError

__all__ = ["LegacyCalls"]

# the warning is attributed to the user's call: LegacyCalls.adapt -> the @public wrapper -> the caller
_STACKLEVEL = 4


class LegacyCalls:
    """The 0.x call forms one public function still accepts; :meth:`adapt` rewrites them into the 1.0 form.

    Parameters
    ----------
    fn : callable
        The function being declared (for its name in messages).
    sig : inspect.Signature
        Its signature.
    renamed : dict or None
        ``{"old keyword": "new keyword"}``.
    legacy_positional : tuple of str
        Keyword-only parameters that a 0.x call may still pass by position, in their old order.
    """

    def __init__(self, fn, sig: inspect.Signature, renamed: dict | None, legacy_positional: tuple):
        self.qualname = fn.__qualname__
        self.renamed = dict(renamed or {})
        self.legacy_positional = tuple(legacy_positional)
        self.n_pos = sum(1 for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        for new_name in self.renamed.values():
            if new_name not in sig.parameters:
                raise TypeError(f"@public on {self.qualname}: renamed target {new_name!r} is not a parameter")

    def adapt(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """``(args, kwargs)`` of a call, with the 0.x forms rewritten (and warned about); ``kwargs`` is updated."""
        if self.renamed and any(k in self.renamed for k in kwargs):
            self._rename(kwargs)
        if self.legacy_positional and len(args) > self.n_pos:
            args = self._keywords_from_positions(args, kwargs)
        return args, kwargs

    def _rename(self, kwargs: dict) -> None:
        for old_name in [k for k in kwargs if k in self.renamed]:
            new_name = self.renamed[old_name]
            if new_name in kwargs:
                raise FCTheoryError(f"{self.qualname}(): got both {old_name!r} (deprecated) and {new_name!r}")
            warnings.warn(
                f"{self.qualname}: argument {old_name!r} is deprecated, use {new_name!r} (see CHANGELOG.md)",
                DeprecationWarning,
                stacklevel=_STACKLEVEL,
            )
            kwargs[new_name] = kwargs.pop(old_name)

    def _keywords_from_positions(self, args: tuple, kwargs: dict) -> tuple:
        extra, args = args[self.n_pos :], args[: self.n_pos]
        if len(extra) > len(self.legacy_positional):
            raise FCTheoryError(
                f"{self.qualname}(): takes at most {self.n_pos + len(self.legacy_positional)} "
                f"positional arguments, got {self.n_pos + len(extra)}"
            )
        names = self.legacy_positional[: len(extra)]
        warnings.warn(
            f"{self.qualname}: pass {', '.join(names)} by keyword (positional use is deprecated, see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=_STACKLEVEL,
        )
        for name, value in zip(names, extra):
            if name in kwargs:
                raise FCTheoryError(f"{self.qualname}(): got multiple values for argument {name!r}")
            kwargs[name] = value
        return args
