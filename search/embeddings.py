"""Memory embeddings: the one writer of ``MemoryEmbedding`` and its reader for recall.

:func:`embed_pending` (run by the worker: ``operations.jobs.periodic_embed_job`` every
``MEMORY_EMBED_EVERY_SECONDS``, and the ``embed`` command) encodes the live memories whose
embedding is missing or stale (content changed), in batches, with
``search.semantic.encoder`` (all-MiniLM-L6-v2 over the memory's content). Recall only reads
them (:func:`vectors_for`) and encodes the query (:func:`query_vector`, cached per process).

The query is encoded while the BM25 phase runs (:func:`query_vector_soon`): ONNX Runtime and
the serving index's NumPy release the GIL, and the Redis and database round trips wait, so
recall's wall time is about the longer of the two instead of their sum.

The model is English-only and recall never rescores a query with CJK text, so a memory whose
letters are mostly CJK (``encoder.cjk_share`` >= 0.5) is not encoded: its row holds no vector
and the model name :data:`LEFT_TO_BM25` for its content hash (done, not pending; an edit makes
it pending again), and in an English query's window it counts as not embedded (its cosine is
the window's mean). Readers select rows by the encoder's model name, so no reader, nor an
older process during a deploy, takes that empty vector for one.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import F, Q

from memories import tracing
from memories.models import Memory
from search.models import MemoryEmbedding
from search.semantic import encoder

log = logging.getLogger(__name__)

# A memory this share of CJK letters or more is left to BM25 (see the module docstring).
_CJK_DOMINANT = 0.5
# The ``model`` of a memory not encoded on purpose (its vector is empty).
LEFT_TO_BM25 = "none (left to BM25)"


def _stale():
    """Live memories whose embedding is missing, of another content, or of another model (an
    encoder change re-embeds everything: readers take only the current model's vectors)."""
    return Memory.objects.filter(deleted_at__isnull=True).filter(
        Q(embedding__isnull=True) | ~Q(embedding__content_hash=F("content_hash"))
        | ~Q(embedding__model__in=[encoder.MODEL_NAME, LEFT_TO_BM25]))


def every_seconds() -> int:
    """Seconds between the worker's embedding runs; 0 when this deployment computes no
    embeddings (``MEMORY_EMBED_EVERY_SECONDS`` 0, or the weights package not installed)."""
    every = getattr(settings, "MEMORY_EMBED_EVERY_SECONDS", 10)
    return every if every > 0 and encoder.model_available() else 0


def pending_count() -> int:
    """Live memories without an up-to-date embedding."""
    return _stale().count()


def _batch(after: str, size: int):
    """The next ``size`` stale memories after memory id ``after``, in primary-key order:
    ``(memory_id, content, content_hash)``. Walked by the primary key from where the last
    batch ended, so a run reads each memory once; ordered by ``created_at`` (no index of its
    own), every batch scanned and sorted the whole table (a run over a namespace took time
    quadratic in its size)."""
    return (_stale().filter(memory_id__gt=after).order_by("memory_id")
            .values_list("memory_id", "content", "content_hash")[:size])


def embed_pending(*, batch: int = 64, limit: int = 2048) -> int:
    """Encode up to ``limit`` memories lacking an up-to-date embedding; returns how many.
    Does nothing (0) when the weights package is not installed."""
    if not encoder.model_available():
        return 0
    done, after = 0, ""
    while done < limit:
        rows = list(_batch(after, batch))
        if not rows:
            break
        after = rows[-1][0]
        vectors = _known(rows)
        skipped = {i for i, (_, content, _) in enumerate(rows)
                   if vectors[i] is None and encoder.cjk_share(content) >= _CJK_DOMINANT}
        todo = [i for i, v in enumerate(vectors) if v is None and i not in skipped]
        if todo:
            for i, vector in zip(todo, encoder.encode([rows[i][1] for i in todo]),
                                 strict=True):
                vectors[i] = vector
        for i, ((memory_id, _, chash), vector) in enumerate(zip(rows, vectors, strict=True)):
            MemoryEmbedding.objects.update_or_create(
                memory_id=memory_id,
                defaults={"content_hash": chash} | (
                    {"model": LEFT_TO_BM25, "vector": b""} if i in skipped else
                    {"model": encoder.MODEL_NAME, "vector": vector.astype("<f4").tobytes()}))
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
    """``{memory_id: unit vector}`` of the given memories that have an up-to-date one (made
    from the content hash the memory's row holds now; a memory left to BM25 has none)."""
    return window_read(memory_ids)[1]


def window_read(memory_ids: list[str]) -> tuple[dict[str, bool], dict[str, np.ndarray]]:
    """``(flags, vectors)`` of a rescoring window: ``{memory_id: needs_resync}`` of the rows
    that exist (search.pending's check) and :func:`vectors_for`'s vectors, in one query.

    One primary-key query in plain SQL, as search.pending's own: the same join through the
    ORM was several times slower (its query building and row conversion cost more than the
    query; docs/benchmarks.md, recall_semantic); and the check's rows come with it, where
    they were a query of their own."""
    if not memory_ids:
        return {}, {}
    memory_table, embedding_table = _sql(Memory._meta.db_table), _sql(MemoryEmbedding._meta.db_table)
    key, chash = _sql("memory_id"), _sql("content_hash")
    flag = _sql(Memory._meta.get_field("needs_resync").column)
    marks = ", ".join(["%s"] * len(memory_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.{key}, m.{flag}, e.{_sql('vector')} FROM {memory_table} m "
            f"LEFT JOIN {embedding_table} e ON e.{key} = m.{key} "
            f"AND e.{_sql('model')} = %s AND e.{chash} = m.{chash} "
            f"WHERE m.{key} IN ({marks})",
            [encoder.MODEL_NAME, *memory_ids])
        rows = cursor.fetchall()
    return ({m: bool(f) for m, f, _ in rows},
            {m: np.frombuffer(bytes(v), dtype="<f4") for m, _, v in rows if v})


def _sql(name: str) -> str:
    return connection.ops.quote_name(name)


# Query vectors of this process, most recently used last (agents repeat questions).
_QUERIES: OrderedDict[str, np.ndarray] = OrderedDict()
_QUERIES_HELD = 1024
_lock = threading.Lock()
# Encoding threads of this process: more than gunicorn's 3 request threads, so one recall's
# query never waits for another's (the encoder runs one intra-op thread per call).
_POOL_SIZE = 4
_pool: ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    # A forked child (a gunicorn worker, an RQ work horse) has none of its parent's threads.
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def _cached(query: str) -> np.ndarray | None:
    with _lock:
        vector = _QUERIES.get(query)
        if vector is not None:
            _QUERIES.move_to_end(query)
        return vector


def query_vector(query: str) -> np.ndarray:
    """The query's unit embedding ``(384,)`` float32, cached per process (the last 1,024)."""
    vector = _cached(query)
    if vector is None:
        vector = encoder.encode([query])[0]
        with _lock:
            _QUERIES[query] = vector
            while len(_QUERIES) > _QUERIES_HELD:
                _QUERIES.popitem(last=False)
    return vector


def query_vector_soon(query: str) -> Callable[[], np.ndarray]:
    """Starts :func:`query_vector` on an encoding thread (unless cached) and returns the call
    that waits for it and gives the vector (or raises what the encode raised)."""
    global _pool
    vector = _cached(query)
    if vector is not None:
        return lambda: vector
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_POOL_SIZE, thread_name_prefix="encode")
        pool = _pool
    return pool.submit(tracing.carried("memory.encode", query_vector), query).result


def encodes_settle() -> None:
    """Wait for the query encodes under way on this process's encoding threads (a recall
    that needed no vector leaves its encode running). The next encode starts a new pool.
    For tests, whose encoder may be swapped between two of them."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True)


def clear_query_cache() -> None:
    """Forget this process's query vectors (benchmarks time the encode; tests)."""
    with _lock:
        _QUERIES.clear()
