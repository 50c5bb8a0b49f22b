"""A new version of an existing memory: the row locked, stamped with kind, actor and reason,
saved (simple-history writes the version), put in the webhook outbox and mirrored after the
commit. Every writer that changes a memory saves through :func:`save_version`."""

from django.utils import timezone

from integrations.webhooks import outbox
from memories.errors import NotFound
from memories.history import actor_name
from memories.mirror import sync_after_commit
from memories.models import Memory
from memories.validation import MEMORY_ID_RE


def stamp_change(memory: Memory, kind: str, actor, reason: str) -> None:
    """Tell the history receiver what this save is (see memories.history)."""
    memory._history_kind = kind
    memory._history_actor = actor_name(actor)
    memory._change_reason = reason or ""
    if actor is not None and not isinstance(actor, str):
        memory._history_user = actor


def get_for_update(memory_id) -> Memory:
    """The row, locked for the transaction. Raises NotFound (also for a malformed id)."""
    if not isinstance(memory_id, str) or not MEMORY_ID_RE.match(memory_id):
        raise NotFound(f"memory {memory_id!r} not found", field="memory_id")
    try:
        return Memory.objects.select_for_update().get(memory_id=memory_id)
    except Memory.DoesNotExist:
        raise NotFound(f"memory {memory_id} not found", field="memory_id") from None


def save_version(memory: Memory, *, kind: str, actor, reason: str) -> Memory:
    """Save ``memory`` as its next version of ``kind`` (a ChangeKind value)."""
    memory.version += 1
    memory.updated_at = timezone.now()
    stamp_change(memory, kind, actor, reason)
    memory.save()
    outbox.outbox_memory_event(memory, kind=kind, actor=actor, reason=reason)
    sync_after_commit(memory)
    return memory
