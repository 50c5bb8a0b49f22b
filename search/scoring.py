"""Scoring functions for memory search: BM25, recency decay, hybrid blend.

Pure Python (no Django, no Redis). BM25 follows Lucene 8+ ``BM25Similarity``:

    score(q, d) = sum over distinct terms t of q with tf(t, d) > 0 of
                  idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))

    idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))

Differences from Lucene's ``explain`` output: Lucene stores document length
lossily in one byte (SmallFloat), so its numbers differ slightly from ours,
which use the exact length; query-term boosts are not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

__all__ = ["bm25", "bm25_terms", "hybrid", "idf", "recency", "tf_part"]

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def idf(n_docs: int, df: int) -> float:
    """Return the BM25 inverse document frequency of a term.

    ``ln(1 + (N - df + 0.5) / (df + 0.5))`` as in Lucene 8+ BM25Similarity.
    The ``1 +`` inside the log keeps it positive even when every document
    contains the term (df == N), unlike classic Robertson-Sparck Jones idf.

    Raises ``ValueError`` if ``n_docs`` or ``df`` is negative or df > n_docs.
    """
    if n_docs < 0 or df < 0:
        raise ValueError(f"n_docs and df must be >= 0 (got {n_docs}, {df})")
    if df > n_docs:
        raise ValueError(f"df ({df}) cannot exceed n_docs ({n_docs})")
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def tf_part(
    tf: int,
    dl: int,
    avgdl: float,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> float:
    """Return the saturated, length-normalised term frequency in [0, 1).

    ``tf / (tf + k1 * (1 - b + b * dl / avgdl))``. Lucene 8+ dropped the
    classic ``(k1 + 1)`` numerator factor: it scales every score by the same
    constant, so rankings are unchanged and scores stay below idf.

    ``tf`` is the term count in the document, ``dl`` the document length in
    tokens, ``avgdl`` the mean document length of the corpus. Returns 0.0 if
    ``tf`` is 0 or ``avgdl`` <= 0 (empty corpus). Raises ``ValueError`` for
    negative ``tf``/``dl``/``k1`` or ``b`` outside [0, 1].
    """
    if tf < 0 or dl < 0:
        raise ValueError(f"tf and dl must be >= 0 (got {tf}, {dl})")
    if k1 < 0 or not 0.0 <= b <= 1.0:
        raise ValueError(f"need k1 >= 0 and 0 <= b <= 1 (got k1={k1}, b={b})")
    if tf == 0 or avgdl <= 0:
        return 0.0
    return tf / (tf + k1 * (1.0 - b + b * dl / avgdl))


def bm25_terms(
    query_terms: Iterable[str],
    doc_tf: Mapping[str, int],
    dl: int,
    n_docs: int,
    df: Mapping[str, int],
    avgdl: float,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> dict[str, float]:
    """Return ``{term: contribution}`` of each distinct query term in the doc.

    A query term repeated in ``query_terms`` counts once. Terms absent from
    the document (tf == 0) are left out. ``doc_tf`` maps term -> count in the
    document, ``df`` maps term -> number of documents containing it; a term in
    the document but missing from ``df`` is taken to have df = 1 (this doc).
    Keys are in first-occurrence order of ``query_terms``.
    """
    out: dict[str, float] = {}
    for term in dict.fromkeys(query_terms):
        tf = doc_tf.get(term, 0)
        if tf > 0:
            out[term] = idf(n_docs, df.get(term, 1)) * tf_part(tf, dl, avgdl, k1, b)
    return out


def bm25(
    query_terms: Iterable[str],
    doc_tf: Mapping[str, int],
    dl: int,
    n_docs: int,
    df: Mapping[str, int],
    avgdl: float,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> float:
    """Return the BM25 score: the sum of :func:`bm25_terms` contributions."""
    return math.fsum(bm25_terms(query_terms, doc_tf, dl, n_docs, df, avgdl, k1, b).values())


def recency(age_seconds: float, half_life_hours: float) -> float:
    """Return exponential recency decay ``0.5 ** (age_hours / half_life)``.

    1.0 for age 0, 0.5 after one half-life, 0.25 after two. Negative ages
    (timestamps in the future) give 1.0; the result is clamped to [0, 1].
    Raises ``ValueError`` if ``half_life_hours`` <= 0.
    """
    if half_life_hours <= 0:
        raise ValueError(f"half_life_hours must be > 0 (got {half_life_hours})")
    if age_seconds <= 0:
        return 1.0
    value = 0.5 ** ((age_seconds / 3600.0) / half_life_hours)
    return min(1.0, max(0.0, value))


def hybrid(
    relevance: float,
    recency: float,
    importance: float,
    w_rel: float,
    w_rec: float,
    w_imp: float,
) -> float:
    """Return ``w_rel*relevance + w_rec*recency + w_imp*importance``.

    Inputs are expected in [0, 1]; with non-negative weights summing to 1 the
    result is in [0, 1] too. No normalisation is applied here.
    """
    return w_rel * relevance + w_rec * recency + w_imp * importance
