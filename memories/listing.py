"""Reads: one namespace's memories and the (namespace, conversation) pairs, a page at a time.

Keyset pagination (no OFFSET: page 1,000 costs what page 1 does), with the cursors of
``memories.cursors`` (opaque to clients: the sort key of the last row served). Raises
InvalidInput (field ``cursor``) for a cursor this module did not make.
"""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, F, Q

from memories.cursors import NOT_OURS, clean_limit, decode_cursor, encode_cursor
from memories.errors import InvalidInput
from memories.models import Memory

MAX_LIMIT = 500
METADATA_FILTERS_MAX = 10  # each one is a JSON path read of every candidate row


def memory_page(*, user_id: str, conversation_id: str | None = None, type: str | None = None,
                metadata: dict[str, str] | None = None, include_forgotten: bool = False,
                cursor: str | None = None, limit: int = 100) -> tuple[list[Memory], str | None]:
    """Memories of ``user_id``, newest first (``created_at``, then ``memory_id``):
    ``(rows, next_cursor)``. ``conversation_id=""`` selects the user-wide memories (none),
    None every memory; ``metadata`` maps dotted paths to the string a memory's metadata holds
    there (``{"langgraph.key": "k1"}``), at most ``METADATA_FILTERS_MAX`` of them."""
    if len(metadata or {}) > METADATA_FILTERS_MAX:
        raise InvalidInput(f"at most {METADATA_FILTERS_MAX} metadata filters",
                           field="metadata")
    rows = Memory.objects.filter(user_id=user_id)
    if conversation_id == "":
        rows = rows.filter(conversation_id__isnull=True)
    elif conversation_id is not None:
        rows = rows.filter(conversation_id=conversation_id)
    if type is not None:
        rows = rows.filter(type=type)
    if not include_forgotten:
        rows = rows.filter(deleted_at__isnull=True)
    for path, value in (metadata or {}).items():
        parts = path.split(".")
        if not all(p.isidentifier() for p in parts) or len(parts) > 5:
            raise InvalidInput(f"metadata filter {path!r}: dotted names only",
                               field=f"metadata.{path}")
        rows = rows.filter(**{"metadata__" + "__".join(parts): value})
    if cursor:
        at, memory_id = decode_cursor(cursor, (str, str))
        try:
            when = dt.datetime.fromisoformat(at)
        except ValueError:
            raise InvalidInput(NOT_OURS, field="cursor") from None
        rows = rows.filter(Q(created_at__lt=when) | Q(created_at=when, memory_id__lt=memory_id))
    limit = clean_limit(limit, default=100, maximum=MAX_LIMIT)
    items = list(rows.order_by("-created_at", "-memory_id")[:limit + 1])
    if len(items) <= limit:
        return items, None
    last = items[limit - 1]
    return items[:limit], encode_cursor([last.created_at.isoformat(), last.memory_id])


def namespace_page(*, user_ids: list[str] | None = None, cursor: str | None = None,
                   limit: int = 100) -> tuple[list[dict], str | None]:
    """Every (user_id, conversation_id) pair holding live memories, ordered by user_id then
    conversation_id (user-wide, None, first), each with its number of live memories:
    ``([{"user_id", "conversation_id", "memories"}], next_cursor)``. ``user_ids`` limits the
    answer to those namespaces."""
    rows = Memory.objects.filter(deleted_at__isnull=True)
    if user_ids is not None:
        rows = rows.filter(user_id__in=user_ids)
    if cursor:
        user_id, conversation_id = decode_cursor(cursor, (str, (str, type(None))))
        after = Q(user_id__gt=user_id)
        if conversation_id is None:
            after |= Q(user_id=user_id, conversation_id__isnull=False)
        else:
            after |= Q(user_id=user_id, conversation_id__gt=conversation_id)
        rows = rows.filter(after)
    pairs = (rows.values("user_id", "conversation_id").annotate(memories=Count("pk"))
             .order_by("user_id", F("conversation_id").asc(nulls_first=True)))
    limit = clean_limit(limit, default=100, maximum=MAX_LIMIT)
    items = list(pairs[:limit + 1])
    if len(items) <= limit:
        return items, None
    last = items[limit - 1]
    return items[:limit], encode_cursor([last["user_id"], last["conversation_id"]])
