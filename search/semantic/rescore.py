"""Semantic rescoring of a BM25 window (pure).

The top ``window`` BM25 matches are re-scored as

    score = (1 - w) * bm25 / max(bm25 in the window) + w * cos(query, memory)

(cosine of unit embeddings, -1..1). Measured on LoCoMo dev (bench/semantic.py), this score
mix beat reciprocal-rank fusion and the encoder alone. ``w`` is the profile's
``w_semantic`` (0..1). A memory whose embedding is not computed yet keeps its BM25 part only
(its cosine counts as the window's mean), so a fresh memory is never pushed to the bottom.
"""

from __future__ import annotations

__all__ = ["mix"]


def mix(bm25: list[float], cosines: list[float | None], w: float) -> list[float]:
    """Mixed scores, one per window entry, in the same order. ``cosines[i]`` None = no
    embedding yet. Raises ValueError when the lists differ in length or ``w`` is not 0..1."""
    if len(bm25) != len(cosines):
        raise ValueError("bm25 and cosines must have the same length")
    if not 0.0 <= w <= 1.0:
        raise ValueError("w must be 0..1")
    if not bm25:
        return []
    best = max(bm25) or 1.0
    known = [c for c in cosines if c is not None]
    fill = sum(known) / len(known) if known else 0.0
    return [(1.0 - w) * b / best + w * (fill if c is None else c)
            for b, c in zip(bm25, cosines, strict=True)]
