"""Semantic rescoring of a recall's window (``w_semantic`` > 0): the query encoded while the
BM25 phase runs, the window's embeddings read with its database check, the score mix of
``search.semantic.rescore``. Embeddings are computed by the worker (``search.embeddings``)."""

import numpy as np

from search import embeddings
from search.results import Hit
from search.semantic import encoder
from search.semantic.rescore import mix

# The window's check and its embeddings, one query (``search.embeddings.window_read``).
window_read = embeddings.window_read


def ready() -> bool:
    """Whether the encoder's weights are installed (found once per process)."""
    return encoder.model_available()


def encode_soon(text: str):
    """The call that gives the query's vector, its encode started now; None when the query is
    not rescored: no text, or CJK in it (the shipped encoder is English-only, so Chinese,
    Japanese and Korean stay with BM25)."""
    if not text.strip() or encoder.cjk_share(text) > 0:
        return None
    return embeddings.query_vector_soon(text)


def rescore(hits: list[Hit], query_vector, w: float, vectors: dict, read) -> None:
    """Semantic rescoring of the window (search.semantic.rescore): the final score becomes
    ``(1 - w) * final / max(final) + w * cos``; embeddings were computed by the worker.
    ``query_vector``: the call that gives the query's vector (:func:`encode_soon`);
    ``vectors``: the embeddings of the memories in ``read`` (the window, read with its
    check); the hits not in it (a time range's candidates) are read here."""
    if not hits:
        return
    unread = [h.memory_id for h in hits if h.memory_id not in read]
    if unread:
        vectors = {**vectors, **embeddings.vectors_for(unread)}
    if not vectors:
        # None computed yet (the worker embeds after commit): BM25's order as it is. The
        # query's encode ran for nothing (and is cached), a cost only until the job has run.
        return
    query = query_vector()
    known = [h.memory_id for h in hits if h.memory_id in vectors]
    products = dict(zip(known, (np.stack([vectors[m] for m in known]) @ query).tolist(),
                        strict=True))
    cosines = [products.get(h.memory_id) for h in hits]
    for h, score, cos in zip(hits, mix([h.score for h in hits], cosines, w), cosines,
                             strict=True):
        h.score = h.explain.final = score
        h.explain.semantic = cos
