"""Drift: memories whose Redis state differs from the database, computed live.

A live row (not forgotten, not expired) must have its hot-store hash at the row's version;
anything Redis holds for a namespace that is not such a row is an orphan. A namespace whose
index statistics (N, total length) differ from its documents has drifted too
(``search.index.statistics``): every recall's IDF would be off. Access counters are not
compared: they are bumped in both places and are not drift. A short-term memory past its
``expire_at`` that Redis still indexes is not drift (its hash leaves by its own TTL, its
index entries at the next recall that meets it), but reconcile removes it all the same.
"""

import logging
from dataclasses import dataclass, field

from django.db.models import Q
from django.utils import timezone

from memories import store
from memories.errors import Conflict
from memories.mirror import sync_memories, sync_memory
from memories.models import Memory
from operations import reindex
from search.index.statistics import statistics_check

log = logging.getLogger(__name__)


@dataclass
class Drift:
    """``stale``: live rows missing or at another version in Redis; ``orphans``: (user_id,
    memory_id) that Redis holds but the database does not hold live; ``statistics``:
    namespaces whose index statistics differ from their documents; ``expired``: (user_id,
    memory_id) of short-term memories past ``expire_at`` that Redis still indexes (not
    counted as drift)."""

    stale: list[str] = field(default_factory=list)
    orphans: list[tuple[str, str]] = field(default_factory=list)
    statistics: list[str] = field(default_factory=list)
    expired: list[tuple[str, str]] = field(default_factory=list)
    memories_in_db: int = 0
    memories_indexed: int = 0
    namespaces: list[str] = field(default_factory=list)
    # Live rows per namespace.
    in_db: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.stale) + len(self.orphans) + len(self.statistics)


def _live_rows():
    now = timezone.now()
    return Memory.objects.filter(deleted_at__isnull=True).filter(
        Q(expire_at__isnull=True) | Q(expire_at__gt=now))


def namespaces() -> list[str]:
    """Every namespace known to the database or to Redis."""
    # order_by(): the model's default ordering would widen DISTINCT to every row.
    in_db = set(Memory.objects.order_by().values_list("user_id", flat=True).distinct())
    client = store.get_client()
    in_redis = {store.text(n) for n in client.smembers(store.global_key("namespaces"))}
    return sorted(in_db | in_redis)


def drift_compute() -> Drift:
    """Compare every namespace: one pipelined HGET per 1,000 rows for the versions, and
    the statistics against every document's length. Raises RedisError."""
    client = store.get_client()
    out = Drift(namespaces=namespaces())
    for user_id in out.namespaces:
        rows = dict(_live_rows().filter(user_id=user_id).values_list("memory_id", "version"))
        out.memories_in_db += len(rows)
        out.in_db[user_id] = len(rows)
        indexed = {store.text(i) for i in client.smembers(store.key(user_id, "ids"))}
        out.memories_indexed += len(indexed)
        ids = list(rows)
        for start in range(0, len(ids), 1000):
            chunk = ids[start:start + 1000]
            pipe = client.pipeline(transaction=False)
            for memory_id in chunk:
                pipe.hget(store.key(user_id, "m", memory_id), "version")
            for memory_id, version in zip(chunk, pipe.execute(), strict=True):
                if store.text(version) != str(rows[memory_id]):
                    out.stale.append(memory_id)
        held = indexed - rows.keys()
        expired = set(Memory.objects.filter(
            user_id=user_id, memory_id__in=held, deleted_at__isnull=True,
            expire_at__lte=timezone.now()).values_list("memory_id", flat=True)) if held else set()
        out.expired += [(user_id, memory_id) for memory_id in sorted(expired)]
        out.orphans += [(user_id, memory_id) for memory_id in sorted(held - expired)]
        if statistics_check(client, user_id):
            out.statistics.append(user_id)
    return out


def drift_repair() -> dict:
    """Repair exactly the drifted memories, remove expired ones from Redis and rebuild the
    namespaces whose statistics are off; returns what was found and repaired."""
    found = drift_compute()
    sync_memories(found.stale)
    for user_id, memory_id in found.orphans + found.expired:
        sync_memory(memory_id, user_id=user_id)
    for user_id in found.statistics:
        # Which write went astray cannot be told from the statistics alone: rebuild the
        # namespace from the database (exact under concurrent writes, swapped atomically).
        try:
            reindex.reindex_namespace(user_id)
        except Conflict:
            log.info("statistics of %s are off; the reindex already running rebuilds them",
                     user_id)
    return {"stale": len(found.stale), "orphans": len(found.orphans),
            "statistics": len(found.statistics), "expired": len(found.expired),
            "drift_after": drift_compute().count,
            # Rows Redis cannot take: skipped (logged, flagged), the others repaired.
            "unindexable": Memory.objects.exclude(index_error="").count()}
