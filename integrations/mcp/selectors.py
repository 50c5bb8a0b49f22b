"""Reads for the MCP tools that the REST API has no selector for yet."""

import base64
import binascii
import datetime as dt

from django.db.models import Q

from memories.errors import InvalidInput
from memories.models import Memory

TYPES = ("long_term", "short_term", "working")


def _cursor(memory: Memory) -> str:
    raw = f"{memory.created_at.isoformat()}|{memory.memory_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _position(cursor: str) -> tuple[dt.datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created_at, memory_id = raw.split("|", 1)
        return dt.datetime.fromisoformat(created_at), memory_id
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput("cursor is not one this server gave out", field="cursor") from None


def memory_page(*, user_id: str, conversation_id: str | None = None,
                types: list[str] | None = None, cursor: str | None = None,
                limit: int = 20) -> tuple[list[Memory], str | None]:
    """One page of the live memories of ``user_id``, newest first (ties: ``memory_id``):
    ``(memories, next_cursor)``, ``next_cursor`` None on the last page.

    Keyset pagination on (``created_at`` desc, ``memory_id`` asc): a write between two
    pages neither repeats nor skips a memory older than the cursor. Raises InvalidInput
    (``cursor``, ``types``).
    """
    if types is not None and not set(types) <= set(TYPES):
        raise InvalidInput("types must be long_term, short_term or working", field="types")
    rows = Memory.objects.filter(user_id=user_id, deleted_at__isnull=True)
    if conversation_id is not None:
        rows = rows.filter(conversation_id=conversation_id)
    if types:
        rows = rows.filter(type__in=types)
    if cursor:
        created_at, memory_id = _position(cursor)
        rows = rows.filter(Q(created_at__lt=created_at)
                           | Q(created_at=created_at, memory_id__gt=memory_id))
    page = list(rows.order_by("-created_at", "memory_id")[:limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return page, (_cursor(page[-1]) if more else None)
