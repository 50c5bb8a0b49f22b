"""Reads: one namespace's memories and the (namespace, conversation) pairs, a page at a time.

Keyset pagination (no OFFSET: page 1,000 costs what page 1 does). A cursor is opaque to
clients: URL-safe base64 of the JSON sort key of the last row served. Raises InvalidInput
(field ``cursor``) for a cursor this module did not make.
"""

from __future__ import annotations

import base64
import datetime as dt
import json

from django.db.models import Count, F, Q

from memories.errors import InvalidInput
from memories.models import Memory

MAX_LIMIT = 500


def encode_cursor(key: list) -> str:
    return base64.urlsafe_b64encode(json.dumps(key, separators=(",", ":")).encode()).decode()


def decode_cursor(cursor: str, size: int) -> list:
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, list) or len(key) != size:
        raise InvalidInput("cursor is not one this API gave", field="cursor")
    return key


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be 1..{MAX_LIMIT}", field="limit")
    return limit


def memory_page(*, user_id: str, conversation_id: str | None = None, type: str | None = None,
                metadata: dict[str, str] | None = None, include_forgotten: bool = False,
                cursor: str | None = None, limit: int = 100) -> tuple[list[Memory], str | None]:
    """Memories of ``user_id``, newest first (``created_at``, then ``memory_id``):
    ``(rows, next_cursor)``. ``conversation_id=""`` selects the user-wide memories (none),
    None every memory; ``metadata`` maps dotted paths to the string a memory's metadata holds
    there (``{"langgraph.key": "k1"}``)."""
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
        at, memory_id = decode_cursor(cursor, 2)
        try:
            when = dt.datetime.fromisoformat(at)
        except (TypeError, ValueError):
            raise InvalidInput("cursor is not one this API gave", field="cursor") from None
        rows = rows.filter(Q(created_at__lt=when) | Q(created_at=when, memory_id__lt=memory_id))
    items = list(rows.order_by("-created_at", "-memory_id")[:check_limit(limit) + 1])
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
        user_id, conversation_id = decode_cursor(cursor, 2)
        after = Q(user_id__gt=user_id)
        if conversation_id is None:
            after |= Q(user_id=user_id, conversation_id__isnull=False)
        else:
            after |= Q(user_id=user_id, conversation_id__gt=conversation_id)
        rows = rows.filter(after)
    pairs = (rows.values("user_id", "conversation_id").annotate(memories=Count("pk"))
             .order_by("user_id", F("conversation_id").asc(nulls_first=True)))
    items = list(pairs[:check_limit(limit) + 1])
    if len(items) <= limit:
        return items, None
    last = items[limit - 1]
    return items[:limit], encode_cursor([last["user_id"], last["conversation_id"]])
