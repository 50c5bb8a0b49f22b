"""Memories created in a query's time range (reads the database; used by recall).

:func:`in_range` is what both a query that is only a time ("yesterday") and the time term of
a boosting profile (``search.temporal.time_term``) read: the live, unexpired memories of a
namespace created in ``[since, until)``, with recall's conversation and type scoping.
"""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.utils import timezone

from memories.models import Memory
from search.temporal import TimeWindow


def in_range(user_id: str, window: TimeWindow, *, conversation_id: str | None = None,
             types: list[str] | None = None):
    """QuerySet of ``Memory`` (unordered): live, not expired, created in ``window``; with
    ``conversation_id``, that conversation's memories plus user-wide and long-term ones (as
    recall scopes), with ``types`` only those types."""
    return live(user_id, conversation_id=conversation_id, types=types).filter(
        created_at__gte=dt.datetime.fromtimestamp(window.since, tz=dt.UTC),
        created_at__lt=dt.datetime.fromtimestamp(window.until, tz=dt.UTC))


def live(user_id: str, *, conversation_id: str | None = None, types: list[str] | None = None):
    """QuerySet of ``Memory`` (unordered): the namespace's live, unexpired memories, scoped
    as recall scopes (see :func:`in_range`)."""
    rows = Memory.objects.filter(user_id=user_id, deleted_at__isnull=True).filter(
        Q(expire_at__isnull=True) | Q(expire_at__gt=timezone.now()))
    if conversation_id:
        rows = rows.filter(Q(conversation_id__isnull=True) | Q(conversation_id=conversation_id)
                           | Q(type="long_term"))
    if types:
        rows = rows.filter(type__in=types)
    return rows


def ids_in_range(user_id: str, window: TimeWindow, *, cap: int, conversation_id=None,
                 types=None) -> tuple[list[str], int]:
    """``(ids, n)``: up to ``cap`` ids of :func:`in_range`, newest first, and how many the
    range holds (one query when it holds at most ``cap``, two otherwise)."""
    rows = in_range(user_id, window, conversation_id=conversation_id, types=types)
    ids = list(rows.order_by("-created_at", "memory_id").values_list("memory_id", flat=True)
               [:cap + 1])
    if len(ids) <= cap:
        return ids, len(ids)
    return ids[:cap], rows.count()
