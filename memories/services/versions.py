"""A new version of an existing memory: the row locked, stamped with kind, actor and reason,
saved (simple-history writes the version), put in the webhook outbox and mirrored after the
commit. Every writer that changes a memory saves through :func:`save_version`."""

from django.utils import timezone

from integrations.webhooks import outbox
from memories.errors import NotFound
from memories.history import history_stamp
from memories.mirror import sync_after_commit
from memories.models import Memory
from memories.validation import MEMORY_ID_RE


def get_for_update(memory_id) -> Memory:
    """The row, locked for the transaction. Raises NotFound (also for a malformed id)."""
    if not isinstance(memory_id, str) or not MEMORY_ID_RE.match(memory_id):
        raise NotFound(f"memory {memory_id!r} not found", field="memory_id")
    try:
        return Memory.objects.select_for_update().get(memory_id=memory_id)
    except Memory.DoesNotExist:
        raise NotFound(f"memory {memory_id} not found", field="memory_id") from None


def save_version(memory: Memory, *, kind: str, actor, reason: str) -> Memory:
    """Save ``memory`` as its next version of ``kind`` (a ChangeKind value).

    The version's reason and user go through simple-history's own ``_change_reason`` and
    ``_history_user``; its kind and actor through ``history_stamp``."""
    memory.version += 1
    memory.updated_at = timezone.now()
    memory._change_reason = reason or ""
    if actor is not None and not isinstance(actor, str):
        memory._history_user = actor
    with history_stamp(kind=kind, actor=actor):
        memory.save()
    outbox.outbox_memory_event(memory, kind=kind, actor=actor, reason=reason)
    sync_after_commit(memory)
    return memory
