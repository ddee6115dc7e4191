"""Former home of weight loading; the formats live in :mod:`fctheory.io.weights` (this path keeps working)."""

from ..io.weights import load_weights, weights_from_state_dict

__all__ = ["load_weights", "weights_from_state_dict"]
