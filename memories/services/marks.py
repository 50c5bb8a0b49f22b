"""The mirror's marks on memory rows, written here only: ``needs_resync`` (the database holds
a write Redis has not taken; the reconcile, ``operations.drift``, repairs it) and
``index_error`` (text Redis cannot take: the row is skipped by every batch and listed on the
Index page). The mirror (``memories.mirror``), the reindex and the import call these; each is
one UPDATE and sends no signal, so no history version is written."""

from memories.models import Memory


def memories_mark_resync(*, memory_ids: list[str] | None = None,
                         user_id: str | None = None) -> None:
    """Flag ``memory_ids`` (or every memory of namespace ``user_id``) ``needs_resync``."""
    rows = (Memory.objects.filter(memory_id__in=memory_ids) if user_id is None
            else Memory.objects.filter(user_id=user_id))
    rows.update(needs_resync=True)


def memory_mark_unmirrorable(*, memory_id: str, reason: str) -> None:
    """Flag one memory ``needs_resync`` with ``index_error`` = ``reason`` (at most 200
    characters, cut by the caller)."""
    Memory.objects.filter(memory_id=memory_id).update(needs_resync=True, index_error=reason)


def memories_mark_mirrored(*, memory_ids: list[str]) -> None:
    """Clear both marks of ``memory_ids``: Redis holds their current version."""
    Memory.objects.filter(memory_id__in=memory_ids).update(needs_resync=False, index_error="")


def memories_clear_index_error(*, memory_ids: list[str]) -> None:
    """Clear ``index_error`` of ``memory_ids`` (a reindex took them after all)."""
    Memory.objects.filter(memory_id__in=memory_ids).update(index_error="")
