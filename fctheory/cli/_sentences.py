"""The ``--data SENTENCES.npz`` option of ``fctheory certify``, ``optimum`` and ``diagnose``: a sentence file
(:func:`fctheory.io.load_sentences`) read and checked against the command's task, refusals naming ``--data``."""

from __future__ import annotations

from .._validate import PathIn
from ..io import load_sentences

__all__ = ["DATA_HELP", "read_sentences"]

DATA_HELP = "the training sentences and labels: a sentence file (.npz with S, y; 'fctheory data' writes one)"


def read_sentences(path, task=None):
    """The :class:`fctheory.io.Sentences` of ``path``, checked against ``task`` (when given) and its own task."""
    return load_sentences(PathIn()("--data", path), task=task, name="--data")
