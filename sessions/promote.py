"""Promote a session message to a long-term memory, and keep its context in line.

A promoted message's memory is indexed with the messages around it in its session (the
``PREVIOUS`` before it and, once it arrives, the ``NEXT`` after it; see
``memories.services.context``, which explains why a later rebuild is an index state and not
a version). Its ``created_at`` is the message's time.
"""

from django.db import transaction

from memories.errors import NotFound
from memories.models import ChangeKind, Memory, MemoryType
from memories.services import context as context_service
from memories.services.create import memory_create


def session_context(session_id: str, seq: int) -> str:
    """The text of the messages around message ``seq`` of a session (oldest first)."""
    from sessions.models import Message

    rows = Message.objects.filter(
        session_id=session_id, seq__gte=seq - context_service.PREVIOUS,
        seq__lte=seq + context_service.NEXT).exclude(seq=seq).order_by("seq")
    return context_service.join_context([m.content for m in rows if m.seq < seq],
                                        [m.content for m in rows if m.seq > seq])


@transaction.atomic
def message_promote(*, session_id: str, seq: int, actor=None, reason: str = "",
                    content: str | None = None, type: str | None = None,
                    importance: float | None = None) -> tuple[Memory, bool]:
    """Promote one session message to a user-wide memory (deduplicated); ``content``,
    ``type`` (default long-term) and ``importance`` (default: estimated) edit it before it
    is written (validated as every write)."""
    from sessions.models import Message

    message = Message.objects.select_related("session").filter(
        session_id=session_id, seq=seq).first()
    if message is None:
        raise NotFound(f"message {seq} of session {session_id!r} not found", field="seq")
    return memory_create(
        actor=actor, kind=ChangeKind.PROMOTE, reason=reason,
        user_id=message.session.user_id,
        agent_id=message.session.agent_id, run_id=message.session.run_id,
        content=message.content if content is None else content,
        type=MemoryType.LONG_TERM if type is None else type, importance=importance,
        source="session", author=message.role, created_at=message.ts,
        context=session_context(session_id, seq), context_from=context_service.SESSION,
        metadata={"promoted_from": {"session_id": session_id, "seq": seq}})


def messages_arrived(*, user_id: str, session_id: str, first_new_seq: int) -> list[str]:
    """After messages from ``first_new_seq`` on were appended: rebuild the context of the
    memories promoted from the message just before them. Returns their ids. Call inside the
    appending transaction."""
    previous = first_new_seq - 1
    if previous < 1:
        return []
    touched = []
    for memory in Memory.objects.filter(
            user_id=user_id, context_from=context_service.SESSION, deleted_at__isnull=True,
            metadata__promoted_from__session_id=session_id,
            metadata__promoted_from__seq=previous):
        context_service.context_rebuilt(memory, session_context(session_id, previous))
        touched.append(memory.memory_id)
    return touched
