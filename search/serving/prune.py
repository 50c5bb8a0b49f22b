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
# A query whose postings add up to at most this many is scored in full by ``flat``.
FLAT_POSTINGS = 40_000


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
        self.slot = np.zeros(0, np.int32)  # a position written for the document (flat)
        self.qid = 0

    def ready(self, n: int) -> int:
        if len(self.stamp) < n or self.qid >= 2**31 - 2:
            size = max(n, 2 * len(self.stamp))
            self.stamp, self.acc, self.qid = np.zeros(size, np.int32), np.zeros(size), 0
            self.slot = np.zeros(size, np.int32)
        self.qid += 1
        return self.qid

    def nbytes(self) -> int:
        return self.stamp.nbytes + self.acc.nbytes + self.slot.nbytes


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


def fill(matrix, tfm, j, term, cand, dl, avgdl, k1, b) -> None:
    """Fill row ``j`` of ``matrix`` (contributions) and of ``tfm`` (raw tfs) for ``cand``."""
    pos, hit = locate(term.docs, cand)
    tfs = term.tfs[pos[hit]]
    matrix[j, hit] = term.idf * tf_part(tfs, dl[cand[hit]], avgdl, k1, b)
    tfm[j, hit] = tfs


def _sum(matrix: np.ndarray) -> np.ndarray:
    """Row by row in query-term order, as a scan accumulates them."""
    total = matrix[0].copy()
    for row in matrix[1:]:
        total += row
    return total


def maxscore(terms: list[Term | None], *, k: int, live, dl, avgdl, k1, b, accept, scratch,
             n: int):
    """``(cand, matrix, tfm)``: the candidates that can be in the top ``k`` (a band around
    the k-th score), their contributions and raw tfs, one row per query term (zeros for
    absent ones and missing terms). ``accept(docs)`` is the filters' boolean mask (or
    None)."""
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
    """``(cand, matrix, tfm)`` of the candidates whose score ``s`` is within rounding of
    the k-th best or above, with their contributions and raw tfs."""
    if len(cand) > k:
        kth = np.partition(s, len(s) - k)[len(s) - k]
        cand = cand[s >= kth - abs(kth) * 1e-9]
    matrix = np.zeros((len(terms), len(cand)))
    tfm = np.zeros((len(terms), len(cand)), np.int32)
    for j in present:
        fill(matrix, tfm, j, terms[j], cand, dl, avgdl, k1, b)
    return cand, matrix, tfm


def _scores(cand, partial, rest, terms, dl, avgdl, k1, b) -> np.ndarray:
    """``partial`` plus the contributions of the terms ``rest`` (looked up) to ``cand``."""
    total = partial.copy()
    for j in rest:
        pos, hit = locate(terms[j].docs, cand)
        total[hit] += terms[j].idf * tf_part(terms[j].tfs[pos[hit]], dl[cand[hit]], avgdl, k1,
                                             b)
    return total


def intersect(terms: list[Term], *, live, dl, avgdl, k1, b, accept):
    """``(cand, matrix, tfm)`` of the documents holding every term (``all`` mode): the rarest
    term's postings, the others looked up."""
    rarest = min(range(len(terms)), key=lambda j: len(terms[j].docs))
    cand, _ = _live(terms[rarest], live)
    if len(cand) and accept is not None:
        cand = cand[accept(cand)]
    for j, term in enumerate(terms):
        if j != rarest and len(cand):
            cand = cand[locate(term.docs, cand)[1]]
    matrix = np.zeros((len(terms), len(cand)))
    tfm = np.zeros((len(terms), len(cand)), np.int32)
    for j, term in enumerate(terms):
        fill(matrix, tfm, j, term, cand, dl, avgdl, k1, b)
    return cand, matrix, tfm


def dense(terms: list[Term | None], *, dl, n: int, avgdl, k1, b, accept, k: int | None):
    """``(cand, matrix, tfm)`` from every match scored over the whole doc id space (``n``):
    with ``k``, of the band that can hold the top k; without, of every match (``collect``)."""
    present = [j for j, t in enumerate(terms) if t is not None]
    contribs = [terms[j].idf * tf_part(terms[j].tfs, dl[terms[j].docs], avgdl, k1, b)
                for j in present]
    cat = np.concatenate([terms[j].docs for j in present])
    scores = np.bincount(cat, weights=np.concatenate(contribs), minlength=n)
    cand = terms[present[0]].docs if len(present) == 1 else np.flatnonzero(scores)
    if accept is not None and len(cand):
        cand = cand[accept(cand)]
    return _band(cand, scores[cand], len(cand) if k is None else k, terms, present, dl,
                 avgdl, k1, b)


def flat(terms: list[Term | None], *, k: int, live, dl, avgdl, k1, b, accept, scratch,
         n: int):
    """``(cand, matrix, tfm)`` as :func:`maxscore` answers, from every posting of the query
    scored at once: the postings of all terms concatenated (in query-term order), one
    vectorised contribution per posting, summed per document with ``np.add.at`` (in posting
    order, so in query-term order). A dozen NumPy calls whatever the number of terms, which
    below ``FLAT_POSTINGS`` postings costs less than MaxScore's per-term steps."""
    present = [j for j, t in enumerate(terms) if t is not None]
    sizes = [len(terms[j].docs) for j in present]
    if len(present) == 1:
        docs, tfs = terms[present[0]].docs, terms[present[0]].tfs
    else:
        docs = np.concatenate([terms[j].docs for j in present])
        tfs = np.concatenate([terms[j].tfs for j in present])
    row = np.repeat(np.array(present, np.intp), sizes)
    idf = np.repeat(np.array([terms[j].idf for j in present]), sizes)
    keep = None
    if not all(terms[j].live_only for j in present):
        keep = live[docs]
    if accept is not None and len(docs):
        keep = accept(docs) if keep is None else keep & accept(docs)
    if keep is not None:
        docs, tfs, row, idf = docs[keep], tfs[keep], row[keep], idf[keep]
    qid = scratch.ready(n)
    contrib = idf * tf_part(tfs, dl[docs], avgdl, k1, b)
    np.add.at(scratch.acc, docs, contrib)
    # One posting per document: each position is written at its document, and the one
    # that stayed (whichever it is) reads itself back.
    at = np.arange(len(docs), dtype=np.int32)
    scratch.slot[docs] = at
    cand = docs[scratch.slot[docs] == at]
    s = scratch.acc[cand]
    scratch.acc[cand] = 0.0
    if len(cand) > k:
        kth = np.partition(s, len(s) - k)[len(s) - k]
        cand = cand[s >= kth - abs(kth) * 1e-9]
        scratch.stamp[cand] = qid
        inside = scratch.stamp[docs] == qid
        docs, tfs, row, contrib = docs[inside], tfs[inside], row[inside], contrib[inside]
    scratch.slot[cand] = np.arange(len(cand), dtype=np.int32)
    col = scratch.slot[docs]
    matrix = np.zeros((len(terms), len(cand)))
    matrix[row, col] = contrib
    tfm = np.zeros((len(terms), len(cand)), np.int32)
    tfm[row, col] = tfs
    return cand, matrix, tfm


def top(matrix: np.ndarray, k: int, ids: np.ndarray) -> np.ndarray:
    """Columns of the best ``k`` candidates by score, best first, ties by memory id (``ids``,
    one per column): ordered by the sequential sum of each column, and where two sums are
    within rounding of each other (a chain of such neighbours) by exact sums
    (``math.fsum``), so a last-bit difference between two ways of summing never changes
    the top k or its order."""
    cols = np.arange(matrix.shape[1])
    if not len(cols):
        return cols
    s = _sum(matrix)
    if len(cols) > k:
        kth = np.partition(s, len(s) - k)[len(s) - k]
        cols = cols[s >= kth - abs(kth) * 1e-12]
    order = cols[np.lexsort((ids[cols], -s[cols]))]
    ranked = s[order]
    # Neighbours closer than this may be in the wrong order: their exact sums decide.
    near = (ranked[:-1] - ranked[1:]) <= np.abs(ranked[:-1]) * 1e-12
    if not near[:k].any():
        return order[:k]
    out = []
    bounds = np.flatnonzero(~near) + 1  # where a chain of near neighbours ends
    starts = [0, *bounds.tolist()]
    ends = [*bounds.tolist(), len(order)]
    for lo, hi in zip(starts, ends, strict=True):
        if lo >= k:
            break
        group = order[lo:hi].tolist()
        # A long chain is one of exact ties (equal tf and dl), equal under any summation.
        if 1 < len(group) <= 4 * k + 64:
            exact = {c: math.fsum(matrix[:, c].tolist()) for c in group}
            group.sort(key=lambda c: (-exact[c], ids[c]))
        out.extend(group)
    return np.array(out[:k], np.intp)
