"""Drift at a bounded cost, for ``GET /index/health`` and the Index page.

Computing drift reads every live row and one Redis field per memory; a few viewers polling
it made every recall wait behind it. So the figure is
computed at most once per ``MEMORY_DRIFT_CACHE_SECONDS`` for every process (one holds a
short lock and computes; the others serve the last figure meanwhile), kept in Redis with
the time it was computed (``drift_at``, ISO 8601), and recomputed at once after a reindex
or a reconcile (:func:`drift_refresh`). Per-namespace statistics travel with it: they cost
two reads per namespace.
"""

import datetime as dt
import json
import logging

from django.conf import settings
from django.utils import timezone

from memories import store
from operations import drift

log = logging.getLogger(__name__)

LOCK_SECONDS = 120


def _keys() -> tuple[str, str]:
    return store.global_key("drift:summary"), store.global_key("drift:lock")


def _compute() -> dict:
    from search.index import fields as index_fields
    from search.index import postings

    client = store.get_client()
    found = drift.drift_compute()
    per_ns = {}
    for user_id in found.namespaces:
        st = postings.field_stats(client, user_id=user_id, field=index_fields.CONTENT)
        per_ns[user_id] = {"in_db": found.in_db.get(user_id, 0),
                           "N": st["N"], "avgdl": round(st["avgdl"], 3),
                           "generation": int(store.text(client.get(store.key(user_id, "gen")))
                                             or 0)}
    return {
        "memories_in_db": found.memories_in_db,
        "memories_indexed": found.memories_indexed,
        "drift": found.count,
        "drifted": found.stale[:50] + [m for _, m in found.orphans[:50]],
        # Namespaces whose index statistics differ from their documents (reconcile rebuilds).
        "drifted_statistics": found.statistics[:50],
        "namespaces": len(per_ns),
        "stats": per_ns,
        "drift_at": timezone.now().isoformat(timespec="microseconds"),
    }


def drift_summary(*, refresh: bool = False) -> dict:
    """``{"memories_in_db", "memories_indexed", "drift", "drifted", "drifted_statistics",
    "namespaces", "stats", "drift_at"}``: the cached figure while it is younger than ``MEMORY_DRIFT_CACHE_SECONDS``
    (or while another process computes it), else computed now. ``refresh`` computes now
    unless another process already does. Raises RedisError."""
    client = store.get_client()
    summary_key, lock_key = _keys()
    raw = client.get(summary_key)
    cached = json.loads(raw) if raw else None
    if cached and not refresh:
        age = timezone.now() - dt.datetime.fromisoformat(cached["drift_at"])
        if age.total_seconds() < settings.MEMORY_DRIFT_CACHE_SECONDS:
            return cached
    try:
        locked = bool(client.set(lock_key, "1", nx=True, ex=LOCK_SECONDS))
    except store.OutOfMemoryError:  # a full Redis takes no lock: compute only if nothing cached
        locked = False
    if not locked and cached:
        return cached  # another process computes it right now: the last figure stands
    try:
        fresh = _compute()
        try:
            client.set(summary_key, json.dumps(fresh))
        except store.RedisError as exc:  # a full Redis: serve it, keep nothing
            log.warning("drift summary not cached: %s", type(exc).__name__)
        return fresh
    finally:
        if locked:
            client.delete(lock_key)


def drift_refresh() -> dict | None:
    """Recompute after a reindex or a reconcile; never raises (returns None on failure)."""
    try:
        return drift_summary(refresh=True)
    except store.RedisError as exc:
        log.warning("drift not recomputed: %s", type(exc).__name__)
        return None
