"""Reads: one namespace's memories and the (namespace, conversation) pairs, a page at a time;
the console's filtered memory list and why its forgotten memories were forgotten.

Keyset pagination (no OFFSET: page 1,000 costs what page 1 does), with the cursors of
``memories.cursors`` (opaque to clients: the sort key of the last row served). Raises
InvalidInput (field ``cursor``) for a cursor this module did not make.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from django.db.models import Count, F, Lookup, Q, QuerySet
from django.utils import timezone

from memories.cursors import TIME, clean_limit, decode_cursor, encode_cursor
from memories.errors import InvalidInput
from memories.models import Memory
from memories.text_fold import fold

MAX_LIMIT = 500
METADATA_FILTERS_MAX = 10  # each one is a JSON path read of every candidate row


def clean_metadata_filters(metadata) -> dict[str, str]:
    """Metadata equality filters, dotted path -> string (``{"langgraph.key": "k1"}``): at
    most ``METADATA_FILTERS_MAX``, each path 1 to 5 Python identifiers. Raises InvalidInput
    naming ``metadata.<path>`` (or ``metadata`` for too many, or not an object of strings)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata filters must be an object of dotted path: string",
                           field="metadata")
    if len(metadata) > METADATA_FILTERS_MAX:
        raise InvalidInput(f"at most {METADATA_FILTERS_MAX} metadata filters",
                           field="metadata")
    for path, value in metadata.items():
        parts = str(path).split(".")
        if not all(p.isidentifier() for p in parts) or len(parts) > 5:
            raise InvalidInput(f"metadata filter {path!r}: dotted names only",
                               field=f"metadata.{path}")
        if not isinstance(value, str):
            raise InvalidInput(f"metadata filter {path!r}: the value must be a string",
                               field=f"metadata.{path}")
    return dict(metadata)


def scoped(rows: QuerySet[Memory], *, since: dt.datetime | None = None,
           until: dt.datetime | None = None, author: str | None = None,
           tags: tuple[str, ...] | list[str] = (), agents: tuple[str, ...] | list[str] = (),
           run_id: str | None = None, metadata: dict[str, str] | None = None,
           valid: tuple[dt.datetime | None, dt.datetime | None] | None = None
           ) -> QuerySet[Memory]:
    """``rows`` kept by the filters every interface shares (recall's in Redis are
    ``search.recall_filters.RecallFilters``): ``created_at`` in ``[since, until)``, the
    author, every tag, an ``agent_id`` among ``agents`` (empty: any), the ``run_id``, the
    metadata equalities (checked: :func:`clean_metadata_filters`) and ``valid = (lo, hi)``:
    the facts holding at some moment of ``[lo, hi]`` (``valid_from <= hi``, ``valid_until``
    null or after ``lo``; an end None is unbounded)."""
    rows = rows.filter(_in_range("created_at", (since, until)))
    if author is not None:
        rows = rows.filter(author=author)
    if tags:
        rows = rows.filter(HasAllTags(F("tags"), tuple(tags)))
    if agents:
        rows = rows.filter(agent_id__in=list(agents))
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    for path, value in clean_metadata_filters(metadata).items():
        rows = rows.filter(**{"metadata__" + "__".join(path.split(".")): value})
    if valid is not None:
        lo, hi = valid
        if hi is not None:
            rows = rows.filter(valid_from__lte=hi)
        if lo is not None:
            rows = rows.filter(Q(valid_until__isnull=True) | Q(valid_until__gt=lo))
    return rows


def memory_page(*, user_id: str, conversation_id: str | None = None, type: str | None = None,
                metadata: dict[str, str] | None = None, include_forgotten: bool = False,
                cursor: str | None = None, limit: int = 100,
                **filters) -> tuple[list[Memory], str | None]:
    """Memories of ``user_id``, newest first (``created_at``, then ``memory_id``):
    ``(rows, next_cursor)``. ``conversation_id=""`` selects the user-wide memories (none),
    None every memory; ``metadata`` maps dotted paths to the string a memory's metadata holds
    there (``{"langgraph.key": "k1"}``), at most ``METADATA_FILTERS_MAX`` of them;
    ``filters``: the others of :func:`scoped`."""
    rows = scoped(Memory.objects.filter(user_id=user_id), metadata=metadata, **filters)
    if conversation_id == "":
        rows = rows.filter(conversation_id__isnull=True)
    elif conversation_id is not None:
        rows = rows.filter(conversation_id=conversation_id)
    if type is not None:
        rows = rows.filter(type=type)
    if not include_forgotten:
        rows = rows.filter(deleted_at__isnull=True)
    if cursor:
        when, memory_id = decode_cursor(cursor, (TIME, str))
        rows = rows.filter(Q(created_at__lt=when) | Q(created_at=when, memory_id__lt=memory_id))
    limit = clean_limit(limit, default=100, maximum=MAX_LIMIT)
    items = list(rows.order_by("-created_at", "-memory_id")[:limit + 1])
    if len(items) <= limit:
        return items, None
    last = items[limit - 1]
    return items[:limit], encode_cursor([last.created_at.isoformat(), last.memory_id])


def namespace_page(*, user_ids: list[str] | None = None, agent_ids: list[str] | None = None,
                   cursor: str | None = None, limit: int = 100) -> tuple[list[dict], str | None]:
    """Every (user_id, conversation_id) pair holding live memories, ordered by user_id then
    conversation_id (user-wide, None, first), each with its number of live memories:
    ``([{"user_id", "conversation_id", "memories"}], next_cursor)``. ``user_ids`` limits the
    answer to those namespaces, ``agent_ids`` the memories counted to those agents'."""
    rows = Memory.objects.filter(deleted_at__isnull=True)
    if user_ids is not None:
        rows = rows.filter(user_id__in=user_ids)
    if agent_ids is not None:
        rows = rows.filter(agent_id__in=agent_ids)
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


# --- the console's memory list -----------------------------------------------------------

# Each state the list can show, as the rows it selects at ``now`` (a later state, e.g.
# archived, is one more entry here). Live: neither forgotten nor ended (``valid_until``
# null or still ahead); superseded: ended, by a newer memory or by hand, and not forgotten;
# all: every memory (the same as no state).
STATES = {
    "live": lambda now: Q(deleted_at__isnull=True)
    & (Q(valid_until__isnull=True) | Q(valid_until__gt=now)),
    "superseded": lambda now: Q(deleted_at__isnull=True, valid_until__lte=now),
    "forgotten": lambda now: Q(deleted_at__isnull=False),
    "all": lambda now: Q(),
}

# The order of each state's list; a unique tie-breaker (memory_id) keeps pages from
# overlapping (public case B31). Forgotten memories come newest-forgotten first, superseded
# ones most recently ended first.
ORDERS = {"forgotten": ("-deleted_at", "memory_id"),
          "superseded": ("-valid_until", "memory_id")}
DEFAULT_ORDER = ("-created_at", "memory_id")


class HasAllTags(Lookup):
    """``tags`` (a JSON list of strings) holds every one of the given tags.

    PostgreSQL: jsonb containment (``@>``). SQLite has no containment, so one ``json_each``
    lookup per tag."""

    lookup_name = "has_all_tags"
    prepare_rhs = False  # the tags, a tuple of strings, bound as parameters below

    def as_sql(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} @> %s::jsonb", [*params, json.dumps(list(self.rhs))]

    def as_sqlite(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        each = f"EXISTS (SELECT 1 FROM json_each({lhs}) WHERE json_each.value = %s)"
        sql = " AND ".join([each] * len(self.rhs))
        return sql, [p for tag in self.rhs for p in (*params, tag)]


@dataclass(frozen=True)
class MemoryFilters:
    """What the console's memory list selects; blank/None/empty means "any".

    ``text`` matches every one of its words, in any order, on the folded content (NFKC +
    case folding, ``memories.text_fold``). Each ``(low, high)`` datetime range is half-open,
    ``low <= value < high`` (either end None: unbounded); the importance range is closed."""

    text: str = ""
    user_id: str = ""
    conversation_id: str = ""
    agent_id: str = ""
    author: str = ""
    tags: tuple[str, ...] = ()
    type: str = ""
    state: str = ""  # "" (any) or a key of STATES
    created: tuple[dt.datetime | None, dt.datetime | None] = (None, None)
    updated: tuple[dt.datetime | None, dt.datetime | None] = (None, None)
    importance: tuple[float | None, float | None] = (None, None)


def _in_range(name: str, bounds: tuple, *, closed: bool = False) -> Q:
    """``low <= name < high`` (``<= high`` when ``closed``); a None end is unbounded."""
    low, high = bounds
    q = Q()
    if low is not None:
        q &= Q(**{f"{name}__gte": low})
    if high is not None:
        q &= Q(**{f"{name}__{'lte' if closed else 'lt'}": high})
    return q


def memory_list(filters: MemoryFilters) -> QuerySet[Memory]:
    """The memories ``filters`` select, totally ordered (see ``ORDERS``), without the large
    columns a list never shows (context, keywords, metadata). A lazy queryset: the caller
    pages it (one COUNT and one SELECT a page)."""
    rows = Memory.objects.defer("context", "keywords", "metadata")
    exact = {"user_id": filters.user_id, "conversation_id": filters.conversation_id,
             "agent_id": filters.agent_id, "author": filters.author, "type": filters.type}
    rows = rows.filter(**{name: value for name, value in exact.items() if value})
    if filters.state:
        rows = rows.filter(STATES[filters.state](timezone.now()))
    for name in ("created", "updated"):
        rows = rows.filter(_in_range(f"{name}_at", getattr(filters, name)))
    rows = rows.filter(_in_range("importance", filters.importance, closed=True))
    if filters.tags:
        rows = rows.filter(HasAllTags(F("tags"), tuple(filters.tags)))
    # On the folded column, both sides folded: "102" finds "会议室１０２" and "москва" finds
    # "Москва" on SQLite too, whose LIKE folds ASCII only. Every word, in any order.
    for word in fold(filters.text).split():
        rows = rows.filter(content_folded__contains=word)
    return rows.order_by(*ORDERS.get(filters.state, DEFAULT_ORDER))


def add_forget_reasons(memories) -> None:
    """Set ``forget_reason`` on each forgotten one of ``memories`` (Memory rows): the reason
    recorded with the version that forgot it (its first version with the ``deleted_at`` the
    row holds now; a rollback to a forgotten version copies that), "" when none was given.
    When and by whom are on the row (``deleted_at``, ``deleted_by``). One query, however
    many memories; none when none is forgotten."""
    forgotten = {m.memory_id: m for m in memories if m.deleted_at is not None}
    if not forgotten:
        return
    versions = (Memory.history
                .filter(memory_id__in=forgotten,
                        deleted_at__in={m.deleted_at for m in forgotten.values()})
                .order_by("memory_id", "history_id")
                .values_list("memory_id", "deleted_at", "history_change_reason"))
    for memory_id, deleted_at, reason in versions:
        memory = forgotten[memory_id]
        if not hasattr(memory, "forget_reason") and deleted_at == memory.deleted_at:
            memory.forget_reason = reason or ""
