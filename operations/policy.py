"""Forgetting policy and consolidation of long-term memories (planned, then applied).

Policy (per namespace): a live long-term memory idle longer than ``idle_days`` (idle = since
its last recall, else its creation) with importance below ``importance_below`` is forgotten
with reason ``policy``; idle ones at or above the bound are offered for consolidation; beyond
``max_long_term`` live long-term memories, the least important (then the longest idle) are
archived. A plan is computed without writing (the dry run), and applying a plan applies
exactly that plan.

Consolidation merges related memories of a namespace (sharing at least ``min_shared``
distinctive terms, transitively) into one new memory whose content a summariser writes,
with importance above its sources' and links to them (``metadata.consolidated_from``); the
sources are forgotten with reason ``consolidated``. :func:`consolidation_undo` brings them
back and forgets the merged memory (what a rollback of it means).
"""

import datetime as dt
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories import access, services
from memories.errors import InvalidInput
from memories.models import ChangeKind, Memory, MemoryType
from search.index.fields import ANALYZERS, CONTENT_STEMMED
from sessions.summarise import get_summariser


@dataclass
class CleanupPlan:
    user_id: str
    forget: list[str] = field(default_factory=list)
    consolidate: list[str] = field(default_factory=list)
    archive: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)



def _live_long_term(user_id: str):
    return Memory.objects.filter(user_id=user_id, type=MemoryType.LONG_TERM,
                                 deleted_at__isnull=True)



def cleanup_plan(*, user_id: str, idle_days: float | None = None,
                 importance_below: float | None = None, max_long_term: int | None = None,
                 now: dt.datetime | None = None) -> CleanupPlan:
    """What the policy would do now (defaults from MEMORY_POLICY_* settings). Writes nothing
    but the namespace's pending recall hits, folded first so idle times are exact."""
    access.access_fold_quietly(user_ids=[user_id])
    now = now or timezone.now()
    idle_days = settings.MEMORY_POLICY_IDLE_DAYS if idle_days is None else idle_days
    bound = settings.MEMORY_POLICY_IMPORTANCE_BELOW if importance_below is None else importance_below
    cap = settings.MEMORY_POLICY_MAX_LONG_TERM if max_long_term is None else max_long_term
    cutoff = now - dt.timedelta(days=idle_days)
    rows = _live_long_term(user_id)
    idle = rows.filter(Q(accessed_at__lt=cutoff) | Q(accessed_at__isnull=True, created_at__lt=cutoff))
    plan = CleanupPlan(user_id=user_id)
    plan.forget = sorted(idle.filter(importance__lt=bound).values_list("memory_id", flat=True))
    plan.consolidate = sorted(idle.filter(importance__gte=bound).values_list("memory_id", flat=True))
    kept = rows.exclude(memory_id__in=plan.forget).order_by(
        "-importance", "-accessed_at", "-created_at", "memory_id")
    plan.archive = list(kept.values_list("memory_id", flat=True)[cap:]) if cap >= 0 else []
    return plan



@transaction.atomic
def cleanup_apply(plan: CleanupPlan, *, actor=None) -> dict:
    """Apply a plan: forget (reason ``policy``) and archive (kind ``archive``)."""
    for memory_id in plan.forget:
        services.memory_forget(memory_id=memory_id, actor=actor, reason="policy")
    for memory_id in plan.archive:
        services.memory_forget(memory_id=memory_id, actor=actor, reason="archived",
                               kind=ChangeKind.ARCHIVE)
    services.audit_record(actor=actor, action="cleanup", target=plan.user_id,
                          data={"forgotten": len(plan.forget), "archived": len(plan.archive)})
    return {"forgotten": len(plan.forget), "archived": len(plan.archive),
            "offered_for_consolidation": len(plan.consolidate)}



def _distinctive_terms(rows: list[Memory]) -> dict[str, set[str]]:
    analyzer = ANALYZERS[CONTENT_STEMMED]
    terms = {m.memory_id: set(analyzer.tokens(m.content)) for m in rows}
    df = Counter(t for ts in terms.values() for t in ts)
    # Terms in more than half of the namespace say nothing about a topic.
    common = {t for t, d in df.items() if d > max(2, len(rows) // 2)}
    return {k: v - common for k, v in terms.items()}



def _pairs_sharing(ids: list[str], terms: dict[str, set[str]], min_shared: int):
    """Pairs ``(a, b)``, a before b in ``ids``, with ``min_shared`` or more terms in common.

    Counted through postings (term -> positions in ``ids``): a memory meets only those that
    share a term with it, so the cost is the sum of each term's squared document frequency,
    not every pair of the namespace.
    """
    postings: dict[str, list[int]] = {}
    for i, memory_id in enumerate(ids):
        for term in terms[memory_id]:
            postings.setdefault(term, []).append(i)
    for i, a in enumerate(ids):
        shared: Counter = Counter()
        for term in terms[a]:
            positions = postings[term]
            shared.update(positions[bisect_right(positions, i):])
        for j, n in shared.items():
            if n >= min_shared:
                yield a, ids[j]



def consolidation_plan(*, user_id: str, min_shared: int = 3,
                       memory_ids: list[str] | None = None) -> list[list[str]]:
    """Groups (2+ ids, oldest first) of related live long-term memories. No writes."""
    rows = list(_live_long_term(user_id).order_by("created_at", "memory_id"))
    if memory_ids is not None:
        rows = [m for m in rows if m.memory_id in set(memory_ids)]
    terms = _distinctive_terms(rows)
    parent = {m.memory_id: m.memory_id for m in rows}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    ids = [m.memory_id for m in rows]
    for a, b in _pairs_sharing(ids, terms, min_shared):
        parent[find(b)] = find(a)
    groups: dict[str, list[str]] = {}
    for memory_id in ids:
        groups.setdefault(find(memory_id), []).append(memory_id)
    return [g for g in groups.values() if len(g) >= 2]



@transaction.atomic
def consolidate_group(*, memory_ids: list[str], actor=None) -> Memory:
    """Merge one group into a new memory; the sources are forgotten (``consolidated``)."""
    rows = list(Memory.objects.select_for_update().filter(
        memory_id__in=memory_ids, deleted_at__isnull=True).order_by("created_at", "memory_id"))
    if len(rows) < 2 or len({m.user_id for m in rows}) != 1:
        raise InvalidInput("a group needs two or more live memories of one namespace",
                           field="memory_ids")
    content = get_summariser().summarise([m.content for m in rows],
                                         max_chars=settings.MEMORY_MAX_CONTENT_CHARS)
    merged, _ = services.memory_create(
        actor=actor, kind=ChangeKind.CONSOLIDATE, reason="consolidation",
        user_id=rows[0].user_id, content=content, type=MemoryType.LONG_TERM,
        importance=min(1.0, round(max(m.importance for m in rows) + 0.1, 2)),
        tags=sorted({t for m in rows for t in m.tags})[:50], source="consolidation",
        metadata={"consolidated_from": [m.memory_id for m in rows]})
    for m in rows:
        services.memory_forget(memory_id=m.memory_id, actor=actor, reason="consolidated")
    return merged

