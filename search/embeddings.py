"""Memory embeddings: the one writer of ``MemoryEmbedding`` and its reader for recall.

:func:`embed_pending` (run by the worker: ``operations.jobs.periodic_embed_job`` every
``MEMORY_EMBED_EVERY_SECONDS``, and the ``embed`` command) encodes the live memories whose
embedding is missing or stale (content changed), in batches, with
``search.semantic.encoder`` (all-MiniLM-L6-v2 over the memory's content). Recall only reads
them (:func:`vectors_for`) and encodes the query (:func:`query_vector`, cached per process).

The model is English-only and recall never rescores a query with CJK text, so a memory whose
letters are mostly CJK (``encoder.cjk_share`` >= 0.5) is not encoded: it gets an empty vector
for its content hash (done, not pending; an edit makes it pending again), and in an English
query's window it counts as not embedded (its cosine is the window's mean).
"""

from __future__ import annotations

import logging
from functools import lru_cache

import numpy as np
from django.db.models import F, Q

from memories.models import Memory
from search.models import MemoryEmbedding
from search.semantic import encoder

log = logging.getLogger(__name__)

# A memory this share of CJK letters or more is left to BM25 (see the module docstring).
_CJK_DOMINANT = 0.5
# The vector of a memory not encoded on purpose.
_NONE = np.zeros(0, dtype="<f4")


def _stale():
    return Memory.objects.filter(deleted_at__isnull=True).filter(
        Q(embedding__isnull=True) | ~Q(embedding__content_hash=F("content_hash")))


def pending_count() -> int:
    """Live memories without an up-to-date embedding."""
    return _stale().count()


def embed_pending(*, batch: int = 64, limit: int = 2048) -> int:
    """Encode up to ``limit`` memories lacking an up-to-date embedding; returns how many.
    Does nothing (0) when the weights package is not installed."""
    if not encoder.model_available():
        return 0
    done = 0
    while done < limit:
        rows = list(_stale().order_by("created_at", "memory_id")
                    .values_list("memory_id", "content", "content_hash")[:batch])
        if not rows:
            break
        vectors = _known(rows)
        for i, (_, content, _) in enumerate(rows):
            if vectors[i] is None and encoder.cjk_share(content) >= _CJK_DOMINANT:
                vectors[i] = _NONE
        todo = [i for i, v in enumerate(vectors) if v is None]
        if todo:
            for i, vector in zip(todo, encoder.encode([rows[i][1] for i in todo]),
                                 strict=True):
                vectors[i] = vector
        for (memory_id, _, chash), vector in zip(rows, vectors, strict=True):
            MemoryEmbedding.objects.update_or_create(
                memory_id=memory_id,
                defaults={"content_hash": chash, "model": encoder.MODEL_NAME,
                          "vector": vector.astype("<f4").tobytes()})
        done += len(rows)
    return done


def _known(rows) -> list:
    """For each ``(memory_id, content, content_hash)``: the vector an embedding of the same
    content (hash) and model already holds, else None. The same text encodes to the same
    vector, so a text seen in another memory or namespace is never encoded twice."""
    hashes = {chash for _, _, chash in rows}
    known = dict(MemoryEmbedding.objects.filter(content_hash__in=hashes, model=encoder.MODEL_NAME)
                 .values_list("content_hash", "vector")[:len(hashes) * 4])
    return [np.frombuffer(bytes(known[chash]), dtype="<f4") if chash in known else None
            for _, _, chash in rows]


def vectors_for(memory_ids: list[str]) -> dict[str, np.ndarray]:
    """``{memory_id: unit vector}`` of the given memories that have an up-to-date one (a
    memory left to BM25, with an empty vector, has none)."""
    rows = MemoryEmbedding.objects.filter(
        memory_id__in=memory_ids, content_hash=F("memory__content_hash"),
        model=encoder.MODEL_NAME).values_list("memory_id", "vector")
    return {m: np.frombuffer(bytes(v), dtype="<f4") for m, v in rows if len(v)}


@lru_cache(maxsize=1024)
def query_vector(query: str) -> np.ndarray:
    """The query's unit embedding (cached per process: agents repeat questions)."""
    return encoder.encode([query])[0]
