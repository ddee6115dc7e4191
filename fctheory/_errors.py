"""The project's single exception type."""


class FCTheoryError(ValueError):
    """Raised for every invalid input or unsolvable request in fctheory.

    A subclass of :class:`ValueError`, so ``except ValueError`` also catches it.
    Messages name the parameter, the offending value and the rule it breaks.
    """


__all__ = ["FCTheoryError"]
