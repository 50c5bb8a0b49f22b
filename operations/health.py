"""Index health for the Index page and ``GET /api/v1/index/health`` (reads only)."""

import django_rq
from django.conf import settings
from rq.registry import FailedJobRegistry

from memories import access, store
from operations import drift
from search.index import fields as index_fields
from search.index import postings


def index_health() -> dict:
    """``{"memories_in_db", "memories_indexed", "drift", "namespaces", "stats", "queues",
    "failed_jobs", "redis", "access_pending"}``; drift is computed live. Raises RedisError
    when Redis is down."""
    client = store.get_client()
    found = drift.drift_compute()
    per_ns = {}
    for user_id in found.namespaces:
        st = postings.field_stats(client, user_id=user_id, field=index_fields.CONTENT)
        per_ns[user_id] = {"N": st["N"], "avgdl": round(st["avgdl"], 3),
                           "avgdl_ref": round(st["avgdl_ref"], 3),
                           "generation": int(store.text(client.get(store.key(user_id, "gen"))) or 0)}
    queues, failed, failed_count = {}, [], 0
    for name in ("default", "index"):
        queue = django_rq.get_queue(name)
        queues[name] = queue.count
        registry = FailedJobRegistry(queue=queue)
        for job_id in registry.get_job_ids(0, 19, desc=True):  # newest first
            failed.append({"job_id": job_id, "queue": name})
        failed_count += registry.count
    memory = client.info("memory")
    return {
        "memories_in_db": found.memories_in_db,
        "memories_indexed": found.memories_indexed,
        "drift": found.count,
        "drifted": found.stale[:50] + [m for _, m in found.orphans[:50]],
        "namespaces": len(per_ns),
        "stats": per_ns,
        "queues": queues,
        "failed_jobs": failed,
        "failed_count": failed_count,
        "redis": {"used_memory": int(memory["used_memory"]),
                  "used_memory_human": memory.get("used_memory_human")},
        # Recall hits not yet in the database; the periodic fold empties it.
        "access_pending": {**access.access_pending(),
                           "fold_every_seconds": settings.MEMORY_ACCESS_FOLD_SECONDS},
    }
