"""Exact BM25 over every posting of the query terms, held as arrays (pure: NumPy only).

``search.serving.chunked`` reads a field's postings from Redis in small commands and hands
them here to be scored. A stored posting score encodes the raw tf and document length
(``put.lua``): ``score = -(level + code / 2**34)``, ``code = tf * 2**17 + (2**17 - 1 - dl)``,
``level`` the impact under the reference statistics (unused here: every posting is read).

BM25 as Lucene 8+ ``BM25Similarity`` (``search.scoring``), with the live N, df and average
length: ``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))``,
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from search.serving import prune

CODE = float(2 ** 34)
TF_UNIT = 2 ** 17


def decode(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(tf, dl)`` (int64 arrays) of stored posting scores (float64, as ZRANGE returns
    them). Exact: a score holds at most 50 significant bits (16 of level, 34 of code)."""
    value = -scores
    level = np.floor(value)
    code = np.rint((value - level) * CODE).astype(np.int64)
    tf = code >> 17
    return tf, (TF_UNIT - 1) - (code - tf * TF_UNIT)


@dataclass
class Matrix:
    """The documents holding at least one query term: ``ids[i]``, its length ``dl[i]``,
    ``tf[i, j]`` of query term j (0: absent) and ``live[i]`` (False: past its expiry)."""

    ids: list[str]
    dl: np.ndarray
    tf: np.ndarray
    live: np.ndarray


def matrix(n_terms: int, postings: list[tuple[list[str], np.ndarray, np.ndarray]],
           dead: set[str]) -> Matrix:
    """The :class:`Matrix` of per-term postings ``[(ids, tf, dl)]`` (term j at index j)."""
    index = {m: i for i, m in enumerate(dict.fromkeys(itertools.chain.from_iterable(
        ids for ids, _, _ in postings)))}
    cols = [(np.fromiter(map(index.__getitem__, ids), np.int64, len(ids)), tf, dl)
            for ids, tf, dl in postings]
    n = len(index)
    out = Matrix(list(index), np.zeros(n, np.int64), np.zeros((n, n_terms), np.int64),
                 np.ones(n, bool))
    for j, (rows, tf, dl) in enumerate(cols):
        out.tf[rows, j] = tf
        out.dl[rows] = dl
    if dead:
        for m in dead:
            i = index.get(m)
            if i is not None:
                out.live[i] = False
    return out


def contributions(m: Matrix, *, n_docs: int, total_len: int, k1: float,
                  b: float) -> tuple[np.ndarray, list[int]]:
    """``(BM25 contribution of term j to document i at [j, i], df per term)``: the df count
    live documents only, and ``n_docs`` / ``total_len`` are the live statistics (expired
    documents taken out). A document's BM25 is the sum of its column."""
    held = (m.tf > 0) & m.live[:, None]
    df = [int(d) for d in held.sum(axis=0)]
    out = np.zeros((len(df), len(m.ids)))
    if n_docs <= 0:
        return out, df
    norm = k1 * (1 - b + b * m.dl / (total_len / n_docs))
    for j, d in enumerate(df):
        tf = m.tf[:, j]
        idf = np.log(1 + (n_docs - d + 0.5) / (d + 0.5))
        out[j] = np.where(tf > 0, idf * tf / (tf + norm), 0.0)
    return out, df


def ranked(m: Matrix, contrib: np.ndarray, eligible: np.ndarray, first: int) -> list[int]:
    """Indices of the ``first`` best eligible documents, best first, equal scores by memory
    id ascending, sums within rounding of each other settled exactly (``prune.top``, as the
    serving index settles them)."""
    cand = np.flatnonzero(eligible)
    if len(cand) > first:
        s = contrib[:, cand].sum(axis=0)
        kth = np.partition(s, len(s) - first)[len(s) - first]
        cand = cand[s >= kth - abs(kth) * 1e-9]  # those within rounding of the k-th too
    cols = prune.top(contrib[:, cand], first, np.array([m.ids[i] for i in cand]))
    return cand[cols].tolist()
