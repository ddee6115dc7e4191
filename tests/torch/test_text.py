"""The word-level corpus of pydoc_data.topics (fctheory/torch/text.py): its words against a tokeniser written
independently (a character loop), the vocabulary's order and counts, Zipf's exponent against exact power laws,
the sequences and the head of the text. Sizes are checked as ranges: the text differs between Python versions."""

import math
import string

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory import FCTheoryError  # noqa: E402
from fctheory.torch.text import Corpus, pydoc_corpus, words_of  # noqa: E402


@pytest.fixture(scope="module")
def corpus():
    return pydoc_corpus()


def _loop_words(text):
    """Maximal runs of a–z after lower-casing, one character at a time (the oracle of words_of)."""
    out, cur = [], []
    for ch in text.lower():
        if ch in string.ascii_lowercase:
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def test_the_corpus_is_the_text_of_every_topic_word_by_word(corpus):
    from pydoc_data import topics

    text = "\n".join(topics.topics[k] for k in sorted(topics.topics))
    assert [corpus.words[i] for i in corpus.ids] == _loop_words(text)
    assert words_of("Don't use x2 or É; it's 3.14!") == ["don", "t", "use", "x", "or", "it", "s"]


def test_the_vocabulary_is_ordered_by_decreasing_count_then_alphabetically(corpus):
    assert np.array_equal(corpus.counts, np.bincount(corpus.ids, minlength=corpus.vocab_size))
    assert len(set(corpus.words)) == corpus.vocab_size and corpus.counts.min() >= 1
    keys = [(-int(c), w) for w, c in zip(corpus.words, corpus.counts)]
    assert keys == sorted(keys)
    assert corpus.singletons == int(np.sum(corpus.counts == 1))


def test_the_sizes_are_those_of_the_standard_librarys_topics(corpus):
    # CPython 3.11.7: 64,285 words, 3,118 distinct, 787 seen once (ranges: the topics change between versions)
    assert 40_000 < corpus.n_words < 150_000 and 2_000 < corpus.vocab_size < 6_000 and 400 < corpus.singletons
    assert corpus.words[0] == "the" and corpus.source.startswith("pydoc_data.topics of Python ")
    assert 0.9 < corpus.zipf_exponent() < 1.6  # Zipfian: a word's count falls about as 1/rank


@pytest.mark.parametrize("s", [0.8, 1.0, 1.3])
def test_zipfs_exponent_of_an_exact_power_law(s):
    counts = np.floor(1e15 * np.arange(1, 2001, dtype=float) ** -s).astype(np.int64)  # floor: 1e-10 relative
    c = Corpus(np.zeros(1, dtype=np.int64), tuple(str(k) for k in range(2000)), counts, "power law")
    assert c.zipf_exponent(top=2000) == pytest.approx(s, rel=1e-8)
    with pytest.raises(FCTheoryError, match="top"):
        c.zipf_exponent(top=1)


def test_sequences_are_consecutive_windows_of_the_text(corpus):
    X = corpus.sequences(32)
    assert X.shape == (corpus.n_words // 32, 32) and X.dtype == np.int64
    assert np.array_equal(X.ravel(), corpus.ids[: X.size])
    with pytest.raises(FCTheoryError, match="length"):
        corpus.sequences(corpus.n_words + 1)


def test_the_head_keeps_the_vocabulary_with_the_counts_of_its_words(corpus):
    h = corpus.head(0.1)
    assert h.words == corpus.words and h.n_words == round(0.1 * corpus.n_words)
    assert np.array_equal(h.ids, corpus.ids[: h.n_words])
    assert np.array_equal(h.counts, np.bincount(h.ids, minlength=corpus.vocab_size))
    assert (h.counts == 0).sum() > 0.5 * corpus.vocab_size  # most words absent from a tenth of the text
    summary = h.summary()
    assert summary["words"] == h.n_words and math.isfinite(summary["zipf_exponent"])


def test_bad_arguments_are_refused_naming_them(corpus):
    with pytest.raises(FCTheoryError, match="^length="):
        corpus.sequences(1)
    with pytest.raises(FCTheoryError, match="^fraction="):
        corpus.head(1.0)
    with pytest.raises(FCTheoryError, match="^text="):
        words_of(b"bytes")
    with pytest.raises(FCTheoryError, match="^top="):
        corpus.zipf_exponent(top=0)
