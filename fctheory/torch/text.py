"""Real English text that every Python installation ships, as a word-level corpus: the documentation topics of the
standard library (:mod:`pydoc_data.topics`, the text of ``help("if")``, ``help("FORMATTING")`` and the other
topics of the language reference).

The topics are joined in the order of their names, lower-cased and cut into words: maximal runs of the letters
a–z (digits, punctuation and code symbols separate words and are dropped). On CPython 3.11.7 that gives 64,285
words over a vocabulary of 3,118, of which 787 occur once: a Zipfian vocabulary (a word's count falls about as
the inverse of its frequency rank) whose long tail of rare words is where a language model's classes are
imbalanced and, in any one part of the text, mostly absent. The text differs a little between Python versions
(:attr:`Corpus.source` names the one read); nothing is downloaded.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .._validate import Instance, Int, Real, fail, public, result_type

__all__ = ["Corpus", "pydoc_corpus", "words_of"]

_WORD = re.compile(r"[a-z]+")


@result_type
@dataclass(frozen=True)
class Corpus:
    """A word-level corpus: the running text as word ids and its vocabulary by decreasing frequency.

    Attributes
    ----------
    ids : ndarray of int64, (n_words,)
        The text, one word id per word, in reading order.
    words : tuple of str
        The vocabulary: word id k is ``words[k]``; ids by decreasing count, ties in alphabetical order (id 0 is
        the most frequent word).
    counts : ndarray of int64, (vocab_size,)
        How often each word occurs in the text (decreasing).
    source : str
        Where the text came from.
    """

    ids: np.ndarray
    words: tuple
    counts: np.ndarray
    source: str

    @property
    def n_words(self) -> int:
        return int(self.ids.shape[0])

    @property
    def vocab_size(self) -> int:
        return len(self.words)

    @property
    def singletons(self) -> int:
        """How many words of the vocabulary occur exactly once."""
        return int(np.count_nonzero(self.counts == 1))

    @public(top=Int(min=2).or_none())
    def zipf_exponent(self, top: int | None = None) -> float:
        """s of Zipf's law count ∝ rank^(−s): minus the least-squares slope of log count against log rank over the
        ``top`` most frequent words (default: every word seen at least twice, above the flat tail of singletons)."""
        counts = np.sort(self.counts)[::-1]
        seen = int(np.count_nonzero(counts))
        top = int(np.count_nonzero(counts >= 2)) if top is None else int(top)
        if not 2 <= top <= seen:
            fail("top", top, f"must lie in [2, {seen}] (the words that occur)")
        x = np.log(np.arange(1, top + 1, dtype=np.float64))
        y = np.log(counts[:top].astype(np.float64))
        x -= x.mean()
        return float(-(x @ (y - y.mean())) / (x @ x))

    @public(length=Int(min=2))
    def sequences(self, length: int) -> np.ndarray:
        """The text cut into consecutive, non-overlapping sequences of ``length`` words (S × length, int64; the
        last n_words mod length words are left out)."""
        S = self.n_words // length
        if S < 1:
            fail("length", length, f"must be at most the corpus' {self.n_words} words")
        return self.ids[: S * length].reshape(S, length).copy()

    @public(fraction=Real(lo=0.0, hi=1.0, hi_open=True))
    def head(self, fraction: float) -> "Corpus":
        """The corpus of the first ``fraction`` of the text (at least 2 words), over the same vocabulary: the words
        that do not occur there keep their ids with count 0 (for a small, fast slice of the same classes)."""
        n = max(2, int(round(fraction * self.n_words)))
        ids = self.ids[:n].copy()
        return Corpus(ids, self.words, np.bincount(ids, minlength=self.vocab_size), f"{self.source}, first {n} words")

    def summary(self) -> dict:
        """The corpus' numbers: words, vocabulary, singletons, the most frequent words, Zipf's exponent."""
        return {
            "source": self.source,
            "words": self.n_words,
            "vocabulary": self.vocab_size,
            "seen_once": self.singletons,
            "top_words": [(self.words[k], int(self.counts[k])) for k in range(min(10, self.vocab_size))],
            "zipf_exponent": self.zipf_exponent() if np.count_nonzero(self.counts >= 2) >= 2 else math.nan,
        }


@public(text=Instance(str))
def words_of(text: str) -> list:
    """The words of ``text``: lower-cased maximal runs of the letters a–z (the corpus' tokenisation)."""
    return _WORD.findall(text.lower())


@public()
def pydoc_corpus() -> Corpus:
    """The word-level corpus of the standard library's documentation topics (:mod:`pydoc_data.topics`).

    Returns
    -------
    Corpus
        The topics joined in the order of their names (one text), cut into lower-case words (:func:`words_of`),
        with the vocabulary by decreasing frequency. Offline: the text ships with every CPython.
    """
    from pydoc_data import topics  # noqa: PLC0415 - 0.5 MB of text, read only when asked for

    text = "\n".join(topics.topics[name] for name in sorted(topics.topics))
    words = words_of(text)
    vocab = sorted(Counter(words).items(), key=lambda wc: (-wc[1], wc[0]))  # decreasing count, then alphabetical
    index = {w: k for k, (w, _) in enumerate(vocab)}
    version = ".".join(map(str, sys.version_info[:3]))
    return Corpus(
        np.fromiter((index[w] for w in words), dtype=np.int64, count=len(words)),
        tuple(w for w, _ in vocab),
        np.array([c for _, c in vocab], dtype=np.int64),
        f"pydoc_data.topics of Python {version}",
    )
