"""The Policy page's consolidation dry run at a bounded cost: computed by a job (or on the
request for a small namespace) and kept in Redis with the time it was computed.

The dry run reads the whole namespace (tokenising, entity extraction, candidate pairs):
minutes for a large namespace (``bench/policy_page.py``, docs/benchmarks.md), far too long
for a page view. So the page serves the cached plan of its (namespace, threshold, group size),
says when it was computed and whether the namespace changed since (its ``stamp``: the
count of rows and their latest change), and a recompute runs as a job
(``operations.jobs.policy_plan_job``). A namespace with at most
``MEMORY_POLICY_INLINE_MAX`` live long-term memories (default 1,000) is still
computed on the request when nothing fresh is cached. Applying a group never trusts the
cache: each apply checks its memories again (``consolidate_group``).

Entry (JSON): ``{"user_id", "threshold", "max_members", "groups": [{"group_id",
"memory_ids", "merged_text", "similarity"}], "computed_at" (ISO 8601), "seconds", "stamp"}``.
"""

import hashlib
import json
import time

from django.conf import settings
from django.db.models import Count, Max
from django.utils import timezone

from memories import store
from memories.models import Memory
from operations import consolidate

TTL_SECONDS = 7 * 24 * 3600  # an unused plan goes away after a week


def _key(user_id: str, threshold: float, max_members: int) -> str:
    digest = hashlib.sha256(f"{threshold!r}:{max_members}".encode()).hexdigest()[:12]
    return store.key(user_id, "policy-plan", digest)


def _job_key(user_id: str, threshold: float, max_members: int) -> str:
    return _key(user_id, threshold, max_members) + ":job"


def namespace_stamp(user_id: str) -> list:
    """What changes whenever a memory of the namespace is written, forgotten or purged:
    ``[rows, latest updated_at, latest deleted_at]`` (one aggregate query)."""
    agg = Memory.objects.filter(user_id=user_id).aggregate(
        n=Count("pk"), updated=Max("updated_at"), deleted=Max("deleted_at")
    )
    return [agg["n"], *(v.isoformat() if v else None for v in (agg["updated"], agg["deleted"]))]


def live_long_term_count(user_id: str) -> int:
    return consolidate._live_long_term(user_id).count()


def plan_compute(*, user_id: str, threshold=None, max_members=None) -> dict:
    """Compute the dry run now, cache it and return the entry. Raises RedisError."""
    threshold, max_members = consolidate.bounds(threshold, max_members)
    stamp = namespace_stamp(user_id)  # before reading: a write meanwhile marks it stale
    start = time.perf_counter()
    plan = consolidate.consolidation_plan(
        user_id=user_id, threshold=threshold, max_members=max_members
    )
    entry = {
        **plan.as_dict(),
        "computed_at": timezone.now().isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - start, 2),
        "stamp": stamp,
    }
    client = store.get_client()
    client.set(_key(user_id, threshold, max_members), json.dumps(entry), ex=TTL_SECONDS)
    client.delete(_job_key(user_id, threshold, max_members))
    return entry


def plan_cached(*, user_id: str, threshold=None, max_members=None) -> dict | None:
    """The cached entry with ``"stale"`` (the namespace changed since), or None."""
    threshold, max_members = consolidate.bounds(threshold, max_members)
    raw = store.get_client().get(_key(user_id, threshold, max_members))
    if raw is None:
        return None
    entry = json.loads(raw)
    entry["stale"] = entry.get("stamp") != namespace_stamp(user_id)
    return entry


def plan_job_id(*, user_id: str, threshold=None, max_members=None) -> str | None:
    """The id of the job computing this plan now, if one was queued."""
    threshold, max_members = consolidate.bounds(threshold, max_members)
    return store.text(store.get_client().get(_job_key(user_id, threshold, max_members)))


def plan_job_claim(*, user_id: str, job_id: str, threshold=None, max_members=None) -> str:
    """Record ``job_id`` as the job computing this plan, unless one is queued already
    (an hour at most); returns the job id that computes it."""
    threshold, max_members = consolidate.bounds(threshold, max_members)
    client = store.get_client()
    key = _job_key(user_id, threshold, max_members)
    if client.set(key, job_id, nx=True, ex=3600):
        return job_id
    return store.text(client.get(key)) or job_id


def plan_forget(*, user_id: str, threshold=None, max_members=None) -> None:
    """Drop the cached plan (a recompute was asked for: the page shows the job meanwhile)."""
    threshold, max_members = consolidate.bounds(threshold, max_members)
    store.get_client().delete(_key(user_id, threshold, max_members))


def plan_release(*, user_id: str, threshold=None, max_members=None) -> None:
    threshold, max_members = consolidate.bounds(threshold, max_members)
    store.get_client().delete(_job_key(user_id, threshold, max_members))


def inline_max() -> int:
    return getattr(settings, "MEMORY_POLICY_INLINE_MAX", 1000)


def cached_groups(*, user_id: str, group_ids, threshold=None, max_members=None):
    """The memory ids of ``group_ids`` from a fresh cached plan, or None (not all cached, or
    the namespace changed): what "Apply all" merges without computing the plan again."""
    try:
        entry = plan_cached(user_id=user_id, threshold=threshold, max_members=max_members)
    except store.RedisError:
        return None
    if entry is None or entry["stale"] or not group_ids:
        return None
    by_id = {g["group_id"]: g["memory_ids"] for g in entry["groups"]}
    if not all(g in by_id for g in group_ids):
        return None
    return [by_id[g] for g in dict.fromkeys(group_ids)]


def plan_groups(entry: dict) -> list[consolidate.PlannedGroup]:
    return [consolidate.PlannedGroup(**g) for g in entry["groups"]]
