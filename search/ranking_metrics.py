"""Ranking-quality and ranking-agreement metrics for offline evaluation.

Pure Python. ``ranked_ids`` is a sequence of ids, best first; ``gains`` maps id ->
graded relevance (0 or missing = not relevant, > 0 = relevant). An id that
appears more than once in a ranking counts only at its first position.
Cutoffs ``k`` must be >= 1.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

__all__ = [
    "jaccard_at_k",
    "mrr_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "rbo",
    "recall_at_k",
]


def _check_k(k: int) -> None:
    """Raise ``ValueError`` unless ``k`` >= 1."""
    if k < 1:
        raise ValueError(f"k must be >= 1 (got {k})")


def _dedupe(items: Sequence[Hashable]) -> list[Hashable]:
    """Return ``items`` without repeats, keeping first occurrences in order."""
    return list(dict.fromkeys(items))


def _top_k(ranked_ids: Sequence[Hashable], k: int) -> list[Hashable]:
    """Return the first ``k`` distinct ids of ``ranked_ids``."""
    _check_k(k)
    return _dedupe(ranked_ids)[:k]


def _dcg(grades: Sequence[float]) -> float:
    """Return sum over ranks r (1-based) of (2**g - 1) / log2(r + 1)."""
    return math.fsum(
        (2.0**g - 1.0) / math.log2(rank + 1) for rank, g in enumerate(grades, start=1) if g > 0
    )


def ndcg_at_k(ranked_ids: Sequence[Hashable], gains: Mapping[Hashable, float], k: int) -> float:
    """Return nDCG@k with exponential gain and log2 discount.

    DCG@k = sum_{r=1..k} (2**g_r - 1) / log2(r + 1); nDCG = DCG / IDCG, where
    IDCG is the DCG of the ideal ordering of all judged grades. Discounted
    cumulative gain is from Järvelin & Kekäläinen (ACM TOIS 20(4), 2002); the
    exponential gain 2**g - 1 and the log2(r + 1) discount are the variant of
    Burges et al. (ICML 2005) used by LETOR/most LTR toolkits. Note that
    trec_eval's ``ndcg`` uses the grade itself (linear gain) instead.
    Returns 0.0 when nothing is relevant.
    """
    top = _top_k(ranked_ids, k)
    ideal = _dcg(sorted((g for g in gains.values() if g > 0), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    return _dcg([gains.get(doc_id, 0) for doc_id in top]) / ideal


def precision_at_k(
    ranked_ids: Sequence[Hashable], gains: Mapping[Hashable, float], k: int
) -> float:
    """Return (relevant ids in the top k) / k, as trec_eval's P@k.

    The denominator is ``k`` even if fewer than k ids were retrieved.
    """
    top = _top_k(ranked_ids, k)
    return sum(1 for doc_id in top if gains.get(doc_id, 0) > 0) / k


def recall_at_k(ranked_ids: Sequence[Hashable], gains: Mapping[Hashable, float], k: int) -> float:
    """Return the share of relevant ids (grade > 0) found in the top k.

    0.0 when there are no relevant ids at all.
    """
    top = _top_k(ranked_ids, k)
    n_relevant = sum(1 for g in gains.values() if g > 0)
    if n_relevant == 0:
        return 0.0
    return sum(1 for doc_id in top if gains.get(doc_id, 0) > 0) / n_relevant


def mrr_at_k(ranked_ids: Sequence[Hashable], gains: Mapping[Hashable, float], k: int) -> float:
    """Return 1 / rank of the first relevant id within the top k, else 0.0.

    Averaging this over queries gives MRR@k.
    """
    for rank, doc_id in enumerate(_top_k(ranked_ids, k), start=1):
        if gains.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def jaccard_at_k(a: Sequence[Hashable], b: Sequence[Hashable], k: int) -> float:
    """Return |A ∩ B| / |A ∪ B| of the top-k id sets of two rankings.

    Two empty rankings are identical: 1.0.
    """
    top_a, top_b = set(_top_k(a, k)), set(_top_k(b, k))
    union = top_a | top_b
    if not union:
        return 1.0
    return len(top_a & top_b) / len(union)


def rbo(a: Sequence[Hashable], b: Sequence[Hashable], p: float = 0.9) -> float:
    """Return extrapolated rank-biased overlap RBO_ext of two finite rankings.

    Webber, Moffat & Zobel, "A similarity measure for indefinite rankings",
    ACM TOIS 28(4), 2010, eq. 32 (uneven lengths; eq. 30 when equal). With S
    the shorter list (length s), L the longer (length l), and X_d the overlap
    of S[:d] and L[:d] (S taken whole when d > s):

        RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d * p**d
                              + sum_{d=s+1..l} X_s*(d-s)/(s*d) * p**d )
                  + ( (X_l - X_s)/l + X_s/s ) * p**l

    It assumes the agreement seen at depth s continues beyond the lists.
    1.0 for identical lists (and when one list is a prefix of the other),
    0.0 for disjoint lists, 1.0 for two empty lists, 0.0 if only one is
    empty. Repeated ids keep their first position. ``p`` in (0, 1) is the
    persistence: smaller p weights the top ranks more.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1) (got {p})")
    short, long_ = _dedupe(a), _dedupe(b)
    if len(short) > len(long_):
        short, long_ = long_, short
    s, l = len(short), len(long_)  # noqa: E741 - names follow the paper
    if s == 0:
        return 1.0 if l == 0 else 0.0

    seen_short: set[Hashable] = set()
    seen_long: set[Hashable] = set()
    overlap = 0  # X_d
    x_s = 0
    weighted = 0.0  # sum_{d=1..l} X_d/d * p**d
    p_d = 1.0
    for d in range(1, l + 1):
        p_d *= p
        if d <= s:
            item = short[d - 1]
            if item in seen_long:
                overlap += 1
            seen_short.add(item)
        item = long_[d - 1]
        if item in seen_short:
            overlap += 1
        seen_long.add(item)
        if d == s:
            x_s = overlap
        weighted += overlap / d * p_d
        if d > s:
            weighted += x_s * (d - s) / (s * d) * p_d
    x_l = overlap
    tail = ((x_l - x_s) / l + x_s / s) * p_d  # p_d == p**l here
    return min(1.0, (1.0 - p) / p * weighted + tail)
