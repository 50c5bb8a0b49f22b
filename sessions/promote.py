"""Promote a session message to a long-term memory."""

from django.db import transaction

from memories.errors import NotFound
from memories.models import ChangeKind, Memory, MemoryType
from memories.services.create import memory_create


@transaction.atomic
def message_promote(*, session_id: str, seq: int, actor=None,
                    reason: str = "") -> tuple[Memory, bool]:
    """Promote one session message to a user-wide long-term memory (deduplicated)."""
    from sessions.models import Message

    message = Message.objects.select_related("session").filter(
        session_id=session_id, seq=seq).first()
    if message is None:
        raise NotFound(f"message {seq} of session {session_id!r} not found", field="seq")
    return memory_create(
        actor=actor, kind=ChangeKind.PROMOTE, reason=reason,
        user_id=message.session.user_id, content=message.content, type=MemoryType.LONG_TERM,
        source="session", author=message.role,
        metadata={"promoted_from": {"session_id": session_id, "seq": seq}})

