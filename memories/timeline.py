"""Readers of facts over time: which memories a memory superseded, and its whole chain.

A memory's ``superseded_by`` links it to its successor; the reverse link (what it
superseded) is the memories naming it, read here in one query for a page of memories.
"""

from memories.models import Memory

# The longest chain the timeline walks each way.
MAX_STEPS = 50


def supersedes_of(memory_ids: list[str]) -> dict[str, list[str]]:
    """``{memory_id: [ids of the memories it superseded, oldest first]}`` for the given ids
    (every id present, [] for none): one query."""
    out: dict[str, list[str]] = {m: [] for m in memory_ids}
    if memory_ids:
        rows = (Memory.objects.filter(superseded_by__in=memory_ids)
                .order_by("valid_from", "memory_id").values_list("superseded_by", "memory_id"))
        for newer, older in rows:
            out[newer].append(older)
    return out


def timeline(memory: Memory) -> list[Memory]:
    """The chain ``memory`` stands in, oldest fact first: the memories it superseded (and
    theirs, following the most recent predecessor), itself, and what superseded it (and so
    on). Each memory appears once."""
    before, seen = [], {memory.memory_id}
    current = memory
    for _ in range(MAX_STEPS):
        prev = (Memory.objects.filter(superseded_by=current.memory_id)
                .exclude(memory_id__in=seen).order_by("-valid_from", "-memory_id").first())
        if prev is None:
            break
        before.append(prev)
        seen.add(prev.memory_id)
        current = prev
    after, current = [], memory
    for _ in range(MAX_STEPS):
        if not current.superseded_by or current.superseded_by in seen:
            break
        nxt = Memory.objects.filter(memory_id=current.superseded_by).first()
        if nxt is None:
            break
        after.append(nxt)
        seen.add(nxt.memory_id)
        current = nxt
    return [*reversed(before), memory, *after]
