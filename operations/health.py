"""Index health for the Index page and ``GET /api/v1/index/health`` (reads only)."""

from django.conf import settings
from rq.registry import FailedJobRegistry

from memories import access, store
from memories import queue as job_queue
from memories.models import Memory
from operations import drift_cache


def unindexable(limit: int = 50) -> dict:
    """Rows Redis cannot take (``Memory.index_error``, set by the mirror; reconcile and
    reindex skip them): ``{"count", "memory_ids", "rows": [{"memory_id", "user_id",
    "error"}]}``, the first ``limit`` by id."""
    rows = Memory.objects.exclude(index_error="").order_by("memory_id")
    first = list(rows.values("memory_id", "user_id", "index_error")[:limit])
    # One query in the usual case (none or a few): the count only when the list is full.
    count = len(first) if len(first) < limit else rows.count()
    return {"count": count, "memory_ids": [r["memory_id"] for r in first],
            "rows": [{"memory_id": r["memory_id"], "user_id": r["user_id"],
                      "error": r["index_error"]} for r in first]}


def index_health(*, refresh: bool = False) -> dict:
    """``{"memories_in_db", "memories_indexed", "drift", "drift_at", "namespaces", "stats",
    "queues", "failed_jobs", "redis", "unindexable", "access_pending"}``. Drift and the per-namespace
    statistics come from ``operations.drift_cache`` (computed at most once per
    ``MEMORY_DRIFT_CACHE_SECONDS``, and after every reindex and reconcile; ``refresh``
    computes it now). ``redis.full`` says Redis refuses writes (maxmemory reached with
    ``noeviction``). Raises RedisError when Redis is down."""
    client = store.get_client()
    summary = drift_cache.drift_summary(refresh=refresh)
    queues, failed, failed_count = {}, [], 0
    for name in job_queue.LOGICAL:
        queue = job_queue.get_queue(name)
        queues[name] = queue.count
        registry = FailedJobRegistry(queue=queue)
        for job_id in registry.get_job_ids(0, 19, desc=True):  # newest first
            failed.append({"job_id": job_id, "queue": name})
        failed_count += registry.count
    memory = client.info("memory")
    return {
        **summary,
        "queues": queues,
        "failed_jobs": failed,
        "failed_count": failed_count,
        "redis": {"used_memory": int(memory["used_memory"]),
                  "used_memory_human": memory.get("used_memory_human"),
                  "full": store.refuses_writes(client)},
        "unindexable": unindexable(),
        # Recall hits not yet in the database; the periodic fold empties it.
        "access_pending": {**access.access_pending(),
                           "fold_every_seconds": settings.MEMORY_ACCESS_FOLD_SECONDS},
    }
