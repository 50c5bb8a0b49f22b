"""Exact top k of a query without scoring every match (PURE): MaxScore and intersection.

A query term's BM25 contribution to a document (Lucene 8+, as ``search.scoring``)
``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` grows with ``tf`` and falls with ``dl``,
so ``idf * tf_part(max tf, min dl)`` over the term's postings bounds every posting of it
(``ub``), whatever the live average length. MaxScore (Turtle & Flood, "Query evaluation:
strategies and optimizations", 1995; Lucene's ``MaxScoreBulkScorer`` does the same with
per-term maximum scores): take the terms with the highest bounds as *essential* and score
every document of their postings; a lower bound ``theta`` of the k-th best score is the
least full score of the k best of those; when the bounds of all the other terms add up to
less than ``theta``, no document outside the essential postings can enter the top k, and
the other terms are only looked up (binary search) for the candidates that can still reach
``theta``. Otherwise one more term becomes essential. ``all`` mode walks the rarest term's
postings and looks the others up.

Candidates are collected without touching the whole document space: a stamp array marks the
documents seen by this query (``Scratch``), so the cost follows the postings walked, not the
namespace size. Every candidate left gets its full score, the sum of its contributions in
query-term order (as a scan over every posting sums them), and the order of the top k is
settled with ``math.fsum`` (``top``), so the answer is the exhaustive scan's, to the bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# A bound is compared with this relative margin, far above the rounding of a few additions.
MARGIN = 1e-9
# Postings walked at once before any bound is tried: at least this many, or this share.
CHEAP_POSTINGS = 2048
CHEAP_SHARE = 1 / 50
# The lower bound of the k-th score is taken among this many times k best partial scores.
THETA_WIDTH = 8


@dataclass
class Term:
    """One query term's postings: ``docs`` ascending (dead documents included unless
    ``live_only``), ``tfs`` raw frequencies, ``idf`` and ``ub`` (bound of a contribution)."""

    docs: np.ndarray
    tfs: np.ndarray
    idf: float
    ub: float
    live_only: bool


class Scratch:
    """Per-index work arrays sized to the document ids (reused by every query: the index's
    lock makes searches one at a time)."""

    def __init__(self):
        self.stamp = np.zeros(0, np.int32)  # query number that last saw the document
        self.acc = np.zeros(0)  # scores being summed; back to zero after each query
        self.qid = 0

    def ready(self, n: int) -> int:
        if len(self.stamp) < n or self.qid >= 2**31 - 2:
            size = max(n, 2 * len(self.stamp))
            self.stamp, self.acc, self.qid = np.zeros(size, np.int32), np.zeros(size), 0
        self.qid += 1
        return self.qid


def tf_part(tfs: np.ndarray, dls: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """The operations of ``scoring.tf_part`` in its order, so the values are its own."""
    tf = tfs.astype(np.float64)
    return tf / (tf + k1 * ((1.0 - b) + (b * dls) / avgdl))


def locate(docs: np.ndarray, cand: np.ndarray):
    """Positions of ``cand`` in the ascending ``docs``, and which are there."""
    if len(docs) == 0:
        return np.zeros(len(cand), np.int64), np.zeros(len(cand), bool)
    pos = np.searchsorted(docs, cand)
    pos[pos >= len(docs)] = 0
    return pos, docs[pos] == cand


def _live(term: Term, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if term.live_only:
        return term.docs, term.tfs
    keep = live[term.docs]
    return term.docs[keep], term.tfs[keep]


def fill(matrix, j, term, cand, cols, dl, avgdl, k1, b) -> None:
    """Fill row ``j`` of ``matrix`` at columns ``cols`` (candidates ``cand[cols]``)."""
    sub = cand[cols]
    pos, hit = locate(term.docs, sub)
    found = cols[hit]
    matrix[j, found] = term.idf * tf_part(term.tfs[pos[hit]], dl[sub[hit]], avgdl, k1, b)


def _sum(matrix: np.ndarray) -> np.ndarray:
    """Row by row in query-term order, as a scan accumulates them."""
    total = matrix[0].copy()
    for row in matrix[1:]:
        total += row
    return total


def maxscore(terms: list[Term | None], *, k: int, live, dl, avgdl, k1, b, accept, scratch,
             n: int):
    """``(cand, matrix)``: the candidates that can be in the top ``k`` (a band around the
    k-th score) and their contributions, one row per query term (zeros for absent ones and
    missing terms). ``accept(docs)`` is the filters' boolean mask (or None)."""
    order = sorted((j for j, t in enumerate(terms) if t is not None), key=lambda j: -terms[j].ub)
    sizes = np.cumsum([len(terms[j].docs) for j in order])
    # Suffix sums of the bounds: what the terms from position e on can add at most.
    tail = [math.fsum(terms[j].ub for j in order[e:]) for e in range(len(order) + 1)]
    # First, as many of the highest bounds as fit in a small walk (rare terms, whose
    # postings cost little and which decide most of the top k).
    first = max(1, int(np.searchsorted(sizes, max(CHEAP_POSTINGS, n * CHEAP_SHARE), "right")))
    qid = scratch.ready(n)
    parts = []

    def walk(js):
        for j in js:
            docs, tfs = _live(terms[j], live)
            if len(docs) and accept is not None:
                keep = accept(docs)
                docs, tfs = docs[keep], tfs[keep]
            new = docs[scratch.stamp[docs] != qid]
            scratch.stamp[new] = qid
            parts.append(new)
            scratch.acc[docs] += terms[j].idf * tf_part(tfs, dl[docs], avgdl, k1, b)

    try:
        walk(order[:first])
        cand = np.concatenate(parts)
        theta = 0.0
        if first < len(order) and len(cand) >= k:
            # theta: the k-th best full score among the best partial ones (a lower bound of
            # the k-th best score of all).
            partial = scratch.acc[cand]
            wide = min(len(cand), THETA_WIDTH * k)
            best = cand[np.argpartition(partial, len(cand) - wide)[len(cand) - wide:]]
            full = _scores(best, scratch.acc[best], order[first:], terms, dl, avgdl, k1, b)
            theta = float(np.partition(full, wide - k)[wide - k])
        # The fewest essential terms whose rest cannot lift an unseen document to theta.
        e = next((e for e in range(first, len(order)) if tail[e] * (1 + MARGIN) < theta),
                 len(order))
        walk(order[first:e])
        cand = np.concatenate(parts)
        s = scratch.acc[cand]
    finally:
        if parts:
            scratch.acc[np.concatenate(parts)] = 0.0
    if e < len(order):
        # Only documents that can still reach theta are looked up in the other terms.
        keep = s + tail[e] * (1 + MARGIN) >= theta
        cand = cand[keep]
        s = _scores(cand, s[keep], order[e:], terms, dl, avgdl, k1, b)
    return _band(cand, s, k, terms, order, dl, avgdl, k1, b)


def _band(cand, s, k, terms, present, dl, avgdl, k1, b):
    """``(cand, matrix)`` of the candidates whose score ``s`` is within rounding of the
    k-th best or above, with their contributions."""
    if len(cand) > k:
        kth = np.partition(s, len(s) - k)[len(s) - k]
        cand = cand[s >= kth - abs(kth) * 1e-9]
    matrix = np.zeros((len(terms), len(cand)))
    every = np.arange(len(cand))
    for j in present:
        fill(matrix, j, terms[j], cand, every, dl, avgdl, k1, b)
    return cand, matrix


def _scores(cand, partial, rest, terms, dl, avgdl, k1, b) -> np.ndarray:
    """``partial`` plus the contributions of the terms ``rest`` (looked up) to ``cand``."""
    total = partial.copy()
    for j in rest:
        pos, hit = locate(terms[j].docs, cand)
        total[hit] += terms[j].idf * tf_part(terms[j].tfs[pos[hit]], dl[cand[hit]], avgdl, k1,
                                             b)
    return total


def intersect(terms: list[Term], *, live, dl, avgdl, k1, b, accept):
    """``(cand, matrix)`` of the documents holding every term (``all`` mode): the rarest
    term's postings, the others looked up."""
    rarest = min(range(len(terms)), key=lambda j: len(terms[j].docs))
    cand, _ = _live(terms[rarest], live)
    if len(cand) and accept is not None:
        cand = cand[accept(cand)]
    for j, term in enumerate(terms):
        if j != rarest and len(cand):
            cand = cand[locate(term.docs, cand)[1]]
    matrix = np.zeros((len(terms), len(cand)))
    every = np.arange(len(cand))
    for j, term in enumerate(terms):
        fill(matrix, j, term, cand, every, dl, avgdl, k1, b)
    return cand, matrix


def dense(terms: list[Term | None], *, dl, n: int, avgdl, k1, b, accept, k: int | None):
    """``(cand, matrix)`` from every match scored over the whole doc id space (``n``): with
    ``k``, only the band that can hold the top k, with its contributions; without, every
    match and no matrix (``collect``)."""
    present = [j for j, t in enumerate(terms) if t is not None]
    contribs = [terms[j].idf * tf_part(terms[j].tfs, dl[terms[j].docs], avgdl, k1, b)
                for j in present]
    cat = np.concatenate([terms[j].docs for j in present])
    scores = np.bincount(cat, weights=np.concatenate(contribs), minlength=n)
    cand = terms[present[0]].docs if len(present) == 1 else np.flatnonzero(scores)
    if accept is not None and len(cand):
        cand = cand[accept(cand)]
    if k is None:
        return cand, None
    return _band(cand, scores[cand], k, terms, present, dl, avgdl, k1, b)


def top(cand: np.ndarray, matrix: np.ndarray, k: int, ids: np.ndarray) -> np.ndarray:
    """The best ``k`` of ``cand`` by score, ties by memory id (``ids``): a band just below
    the k-th sequential sum is re-ranked by exact sums, so a last-bit difference between
    two ways of summing never changes the top k."""
    s = _sum(matrix) if len(matrix) else np.zeros(len(cand))
    cols = np.arange(len(cand))
    if len(cand) > k:
        kth = np.partition(s, len(s) - k)[len(s) - k]
        band = kth - abs(kth) * 1e-12
        cols = cols[s >= band]
    if len(cols) <= 4 * k + 64:
        exact = [math.fsum(matrix[:, c]) for c in cols]
        order = sorted(range(len(cols)), key=lambda r: (-exact[r], ids[cand[cols[r]]]))
        return cand[cols[order[:k]]]
    # Many exact ties (equal tf and dl): they are equal under any summation order.
    order = np.lexsort((ids[cand[cols]], -s[cols]))
    return cand[cols[order[:k]]]
