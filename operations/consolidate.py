"""Consolidation of one namespace: the plan (a dry run), applying chosen groups, each alone.

Reads the namespace's live long-term memories, asks the pure modules which are
near-duplicates (:mod:`operations.consolidation.grouping`) and what text each merged memory
gets (:mod:`operations.consolidation.merge`), and writes only through ``memories.services``.

A merge forgets its sources (reason ``consolidated``) BEFORE it writes the merged memory, so
the content-hash deduplication of ``memory_create`` can never hand back one of the sources as
"the merged memory" (the merged text often equals the longest source: "Use argon2 for
password hashing. Rotate keys yearly." + "Use argon2 for password hashing."). A merged text
that another live memory of the scope already holds is refused (409), not silently reused.
The merged memory keeps ``metadata.consolidated_from`` (the sources, oldest first); its undo
is ``memories.services.consolidation_undo`` (``POST /memories/{id}/rollback {"version": 0}``).
"""

from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import transaction

from memories import services
from memories.errors import Conflict, InvalidInput
from memories.models import ChangeKind, Memory, MemoryType
from operations.consolidation.grouping import (
    DEFAULT_MAX_MEMBERS,
    DEFAULT_THRESHOLD,
    Candidate,
    Corpus,
    plan_groups,
)
from operations.consolidation.merge import merge_contexts, merge_texts
from search.index.fields import ANALYZERS, CONTENT_STEMMED

MAX_MEMBERS_LIMIT = 50  # the most members an admin may allow per group
GROUPS_MAX = 500  # the most groups one apply call names (each is checked with a query)


def _tokenize(text: str) -> list[str]:
    """The index's own analysis of content (stemmed, stopwords dropped, CJK bigrams)."""
    return ANALYZERS[CONTENT_STEMMED].tokens(text)


@dataclass
class PlannedGroup:
    group_id: str
    memory_ids: list[str]
    merged_text: str
    similarity: float


@dataclass
class ConsolidationPlan:
    """``POST /consolidate {"dry_run": true}``: ``threshold`` (0..1) and ``max_members`` used,
    and the groups in the order of their oldest member."""
    user_id: str
    threshold: float
    max_members: int
    groups: list[PlannedGroup] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def bounds(threshold=None, max_members=None) -> tuple[float, int]:
    """The threshold (0..1) and group size (2..50) to use: the given ones, else the
    ``MEMORY_CONSOLIDATION_THRESHOLD`` / ``MEMORY_CONSOLIDATION_MAX_MEMBERS`` settings.
    Raises InvalidInput naming ``threshold`` or ``max_members``."""
    if threshold is None:
        threshold = getattr(settings, "MEMORY_CONSOLIDATION_THRESHOLD", DEFAULT_THRESHOLD)
    if max_members is None:
        max_members = getattr(settings, "MEMORY_CONSOLIDATION_MAX_MEMBERS", DEFAULT_MAX_MEMBERS)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
            or not 0 <= threshold <= 1:
        raise InvalidInput("threshold must be a number within 0..1", field="threshold")
    if isinstance(max_members, bool) or not isinstance(max_members, int) \
            or not 2 <= max_members <= MAX_MEMBERS_LIMIT:
        raise InvalidInput(f"max_members must be an integer within 2..{MAX_MEMBERS_LIMIT}",
                           field="max_members")
    return float(threshold), max_members


def _live_long_term(user_id: str):
    return Memory.objects.filter(user_id=user_id, type=MemoryType.LONG_TERM,
                                 deleted_at__isnull=True).order_by("created_at", "memory_id")


def consolidation_plan(*, user_id: str, threshold=None, max_members=None) -> ConsolidationPlan:
    """The groups a consolidation of ``user_id`` would merge now, each with its merged text
    and similarity. Writes nothing. A group whose merged text would exceed
    ``MEMORY_MAX_CONTENT_CHARS`` is left out."""
    threshold, max_members = bounds(threshold, max_members)
    rows = list(_live_long_term(user_id).only("memory_id", "content", "user_id",
                                              "conversation_id", "agent_id"))
    content = {m.memory_id: m.content for m in rows}
    # A group never spans agents: the scope holds the agent_id ("" an agent of its own).
    candidates = [Candidate(m.memory_id, m.content, (m.user_id, m.agent_id,
                                                     m.conversation_id))
                  for m in rows]
    plan = ConsolidationPlan(user_id=user_id, threshold=threshold, max_members=max_members)
    for group in plan_groups(candidates, tokenize=_tokenize, threshold=threshold,
                             max_members=max_members):
        try:
            merged = merge_texts([content[i] for i in group.members],
                                 max_chars=settings.MEMORY_MAX_CONTENT_CHARS)
        except ValueError:
            continue
        plan.groups.append(PlannedGroup(group.group_id, group.members, merged,
                                        group.similarity))
    return plan


def _check_group(rows: list[Memory], memory_ids: list[str], *, field_name: str) -> None:
    """Raise InvalidInput unless ``rows`` (the live long-term memories of ``memory_ids``) may
    merge: two or more, all found, one namespace, agent_id and conversation, one language,
    and no two naming different things (the same guards as the plan, without its threshold)."""
    if len(memory_ids) < 2 or len(set(memory_ids)) != len(memory_ids):
        raise InvalidInput("a group needs two or more different memory ids", field=field_name)
    found = {m.memory_id for m in rows}
    missing = [i for i in memory_ids if i not in found]
    if missing:
        raise InvalidInput(f"{missing[0]} is not a live long-term memory", field=field_name)
    if len({(m.user_id, m.agent_id, m.conversation_id) for m in rows}) != 1:
        raise InvalidInput("a group's memories must share one namespace, agent_id and "
                           "conversation", field=field_name)
    corpus = Corpus({m.memory_id: m.content for m in rows}, _tokenize)
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if not corpus.compatible(a.memory_id, b.memory_id):
                raise InvalidInput(
                    f"{a.memory_id} and {b.memory_id} are in different languages or name "
                    f"different things", field=field_name)


def resolve_groups(*, user_id: str, group_ids=None, groups=None, threshold=None,
                   max_members=None) -> list[list[str]]:
    """The groups an apply call means: those of the current plan named by ``group_ids``
    (Conflict naming ``group_ids`` when one is no longer in it: run the dry run again), or
    the explicit ``groups`` (lists of memory ids of ``user_id``, checked as the plan checks
    them, InvalidInput naming ``groups``), or every group of the plan. Either list holds at
    most ``GROUPS_MAX`` groups (InvalidInput naming it)."""
    if group_ids is not None and groups is not None:
        raise InvalidInput("give group_ids or groups, not both", field="groups")
    for name, named in (("group_ids", group_ids), ("groups", groups)):
        if named is not None and len(named) > GROUPS_MAX:
            raise InvalidInput(f"{name} takes at most {GROUPS_MAX} groups", field=name)
    _, limit = bounds(threshold, max_members)
    if groups is None:
        plan = consolidation_plan(user_id=user_id, threshold=threshold, max_members=max_members)
        by_id = {g.group_id: g.memory_ids for g in plan.groups}
        if group_ids is None:
            return list(by_id.values())
        for gid in group_ids:
            if gid not in by_id:
                raise Conflict(f"group {gid} is not in the current plan (the memories changed, "
                               f"or another threshold): run the dry run again",
                               field="group_ids")
        return [by_id[gid] for gid in dict.fromkeys(group_ids)]
    seen: set[str] = set()
    for memory_ids in groups:
        if not isinstance(memory_ids, list) or not all(isinstance(i, str) for i in memory_ids):
            raise InvalidInput("groups must be lists of memory ids", field="groups")
        if len(memory_ids) > limit:
            raise InvalidInput(f"a group holds at most {limit} memories", field="groups")
        if seen & set(memory_ids):
            raise InvalidInput("a memory may be in one group only", field="groups")
        seen |= set(memory_ids)
        rows = list(_live_long_term(user_id).filter(memory_id__in=memory_ids))
        _check_group(rows, memory_ids, field_name="groups")
    return [list(g) for g in groups]


@transaction.atomic
def consolidate_group(*, memory_ids: list[str], actor=None,
                      reason: str = "consolidation") -> Memory:
    """Merge one group into a new memory (kind ``consolidate``) and forget the sources
    (reason ``consolidated``), in one transaction with one audit event (``consolidate``,
    target the merged memory). Raises InvalidInput (not a group that may merge, or a merged
    text over ``MEMORY_MAX_CONTENT_CHARS``), Conflict (another live memory already holds the
    merged text). The merged memory carries the group's ``agent_id`` (one per group) and its
    ``run_id`` when every source shares one (else none)."""
    rows = list(Memory.objects.select_for_update().filter(
        memory_id__in=memory_ids, type=MemoryType.LONG_TERM, deleted_at__isnull=True,
    ).order_by("created_at", "memory_id"))
    _check_group(rows, list(memory_ids), field_name="memory_ids")
    try:
        content = merge_texts([m.content for m in rows],
                              max_chars=settings.MEMORY_MAX_CONTENT_CHARS)
    except ValueError as exc:
        raise InvalidInput(str(exc), field="memory_ids") from exc
    sources = [m.memory_id for m in rows]
    # The sources' neighbouring turns stay indexed with the merged memory (copied, never
    # rebuilt: its place in the conversation is theirs, not its own created_at's).
    context = merge_contexts([m.context for m in rows], contents=[m.content for m in rows],
                             max_chars=settings.MEMORY_MAX_CONTENT_CHARS)
    for m in rows:
        services.memory_forget(memory_id=m.memory_id, actor=actor, reason="consolidated")
    merged, deduplicated = services.memory_create(
        actor=actor, kind=ChangeKind.CONSOLIDATE, reason=reason or "consolidation",
        user_id=rows[0].user_id, conversation_id=rows[0].conversation_id, content=content,
        type=MemoryType.LONG_TERM, agent_id=rows[0].agent_id,
        run_id=rows[0].run_id if len({m.run_id for m in rows}) == 1 else "",
        importance=min(1.0, round(max(m.importance for m in rows) + 0.1, 2)),
        tags=sorted({t for m in rows for t in m.tags})[:50], source="consolidation",
        metadata={"consolidated_from": sources}, context=context,
        context_from="copy" if context else "")
    if deduplicated:
        # Raising rolls the forgets back too: the group stays as it was.
        raise Conflict(f"{merged.memory_id} already holds the merged text", field="memory_ids")
    services.audit_record(actor=actor, action="consolidate", target=merged.memory_id,
                          reason=reason, data={"user_id": merged.user_id,
                                               "consolidated_from": sources})
    return merged


def consolidate_groups(*, groups: list[list[str]], actor=None,
                       reason: str = "consolidation") -> dict:
    """Apply each group alone (one transaction each): a group that fails is reported and
    the others go on. ``{"groups", "merged": [memory_id], "skipped": [{"memory_ids",
    "error"}]}``."""
    merged, skipped = [], []
    for memory_ids in groups:
        try:
            merged.append(consolidate_group(memory_ids=memory_ids, actor=actor,
                                            reason=reason).memory_id)
        except (InvalidInput, Conflict) as exc:
            skipped.append({"memory_ids": memory_ids, "error": exc.message})
    return {"groups": len(groups), "merged": merged, "skipped": skipped}
