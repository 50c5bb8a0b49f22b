"""The worker's embedding job, as production runs it, for the quality benchmarks.

In production the worker runs ``operations.jobs.periodic_embed_job`` every
``MEMORY_EMBED_EVERY_SECONDS`` (10 s): ``search.embeddings.embed_pending`` over the memories
written since, up to 2,048 a run. A benchmark writes everything first, so it runs that job's
body back to back until nothing is pending, and times it. Recall asked before this (or for a
memory written after it) falls back to BM25 for the memories without an embedding.
"""

import time


def run_until_done() -> tuple[int, float]:
    """``(memories embedded, seconds)``; 0 when the weights package is not installed."""
    from search import embeddings

    started, total = time.perf_counter(), 0
    while True:
        done = embeddings.embed_pending()
        total += done
        if not done:
            return total, time.perf_counter() - started
