"""Writers that create memories: validation, dedup by content hash, the importance estimate.

Every write goes through a service; views, jobs and the API never save a Memory themselves.
"""

import datetime as dt
import functools
import hashlib
import operator
import unicodedata

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from integrations.metrics.registry import count_write
from integrations.webhooks import outbox
from memories import importance as importance_estimate
from memories import tracing
from memories.errors import InvalidInput, TooLarge
from memories.history import history_attrs
from memories.mirror import sync_instances_after_commit, sync_memories
from memories.models import ChangeKind, Memory, MemoryType
from memories.services import conflicts, validity
from memories.services import context as context_service
from memories.text_check import LINE
from memories.text_fold import fold
from memories.validation import (
    clean_identifier,
    clean_json_object,
    clean_string_list,
    clean_text,
    clean_unit_float,
)

MAX_METADATA_BYTES = 16384
# Deep enough for any real record; every later walk (the ORM's encoder, the mirror's JSON)
# recurses once per level.
MAX_METADATA_DEPTH = 20

MAX_TTL_SECONDS = 365 * 24 * 3600


def content_hash(content: str) -> str:
    """SHA-256 hex of the NFKC-normalised, stripped content (the dedup key)."""
    return hashlib.sha256(unicodedata.normalize("NFKC", content).strip().encode()).hexdigest()


def clean_content(content) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string", field="content")
    if not content.strip():
        raise InvalidInput("content must not be blank", field="content")
    limit = settings.MEMORY_MAX_CONTENT_CHARS
    if len(content) > limit:
        raise TooLarge(
            f"content is {len(content)} characters; the limit is {limit}",
            field="content", limit=limit,
        )
    return clean_text(content, "content")



def clean_metadata(metadata) -> dict:
    return clean_json_object(metadata, "metadata", max_depth=MAX_METADATA_DEPTH,
                             max_bytes=MAX_METADATA_BYTES)


def clean_type(value) -> str:
    if value not in MemoryType.values:
        raise InvalidInput(f"type must be one of {', '.join(MemoryType.values)}", field="type")
    return value


def _aware(value: dt.datetime) -> dt.datetime:
    """Naive datetimes (imports, fixtures) are taken as UTC, never compared naive."""
    if timezone.is_naive(value):
        return value.replace(tzinfo=dt.UTC)
    return value


def clean_context(context) -> str:
    if not isinstance(context, str) or len(context) > settings.MEMORY_MAX_CONTENT_CHARS:
        raise InvalidInput("context must be a string no longer than the content limit",
                           field="context")
    clean_text(context, "context")
    return context


@functools.cache
def _duplicate_sql(vendor: str, in_conversation: bool) -> str:
    """The live duplicates of one dedup key: ``user_id``, ``conversation_id`` (``IS NULL``
    for a user-wide memory, as the ORM's ``conversation_id=None`` reads), ``type``,
    ``content_hash``. Built once: the ORM query, compiled per create, was a measurable share
    of a user-wide create's CPU (docs/benchmarks.md, ingest)."""
    qn = connection.ops.quote_name
    col = {f.name: qn(f.column) for f in Memory._meta.concrete_fields}
    conversation = "= %s" if in_conversation else "IS NULL"
    # No ORDER BY: with one, a planner without statistics (SQLite before ANALYZE) walked
    # the namespace's (user_id, created_at) index to avoid a sort (slow in a large
    # namespace). With equalities only, it searches the dedup key's index; the few rows
    # found (at most a handful) are ordered by the caller.
    return (f"SELECT {', '.join(col.values())} FROM {qn(Memory._meta.db_table)} "
            f"WHERE {col['user_id']} = %s AND {col['conversation_id']} {conversation} "
            f"AND {col['type']} = %s AND {col['content_hash']} = %s "
            f"AND {col['deleted_at']} IS NULL")


def _live_duplicate(*, user_id, conversation_id, type, chash, agent_id="") -> Memory | None:
    """The oldest live memory with this dedup key (``conversation_id`` None: user-wide) of
    the same agent (``agent_id``: one agent's memory is never answered to another)."""
    in_conversation = conversation_id is not None
    params = [user_id, *([conversation_id] if in_conversation else []), type, chash]
    rows = Memory.objects.raw(_duplicate_sql(connection.vendor, in_conversation), params)
    return min((m for m in rows if m.agent_id == agent_id),
               key=lambda m: (m.created_at, m.memory_id), default=None)


@functools.cache
def _window_sql(vendor: str) -> str:
    """One statement for a memory in a conversation: its live duplicates (``part`` 0) and
    the rows of its agent (the same ``agent_id``, "" only "") around its time in the
    conversation (1: at or before, 2: at or after; another agent's turns are never its
    neighbours), each part searched in its own index as the three ORM queries were."""
    qn = connection.ops.quote_name
    col = {f.name: qn(f.column) for f in Memory._meta.concrete_fields}
    cols = ", ".join(col.values())
    table = qn(Memory._meta.db_table)
    conversation = (f"{col['user_id']} = %s AND {col['conversation_id']} = %s "
                    f"AND {col['deleted_at']} IS NULL")
    near = (f"SELECT {{part}} AS part, {cols} FROM {table} WHERE {conversation} "
            f"AND {col['agent_id']} = %s AND NOT ({col['memory_id']} = %s) "
            f"AND {col['created_at']} {{op}} %s "
            f"ORDER BY {col['created_at']} {{way}}, {col['memory_id']} {{way}} LIMIT {{n}}")
    return " UNION ALL ".join([
        f"SELECT 0 AS part, {cols} FROM {table} WHERE {conversation} "
        f"AND {col['type']} = %s AND {col['content_hash']} = %s",
        "SELECT * FROM (" + near.format(part=1, op="<=", way="DESC",
                                        n=context_service.BEFORE_ROWS) + ") AS b",
        "SELECT * FROM (" + near.format(part=2, op=">=", way="ASC",
                                        n=context_service.AFTER_ROWS) + ") AS a",
    ])


def _duplicate_and_window(memory: Memory) -> tuple[Memory | None, context_service.Window]:
    """The live duplicate of unsaved ``memory`` (the oldest; None) and its conversation
    window. A memory in a conversation reads both in one statement: the duplicate check
    and the window's two queries as ORM queries cost a large share of a create's CPU
    (compiling the SQL, mostly; docs/benchmarks.md, ingest)."""
    if not memory.conversation_id:
        return _live_duplicate(user_id=memory.user_id, conversation_id=None,
                               type=memory.type, chash=memory.content_hash,
                               agent_id=memory.agent_id), \
            context_service.Window(memory)
    at = connection.ops.adapt_datetimefield_value(memory.created_at)
    where = [memory.user_id, memory.conversation_id]
    near = [*where, memory.agent_id, memory.memory_id, at]
    rows = list(Memory.objects.raw(_window_sql(connection.vendor), [
        *where, memory.type, memory.content_hash, *near, *near]))
    parts: dict[int, list[Memory]] = {0: [], 1: [], 2: []}
    for row in rows:
        if row.part or row.agent_id == memory.agent_id:  # a duplicate is the same agent's
            parts[row.part].append(row)
    existing = min(parts[0], key=lambda m: (m.created_at, m.memory_id), default=None)
    return existing, context_service.Window(memory, rows=(parts[1], parts[2]))


def build_memory(
    *, user_id, content, conversation_id=None, type=MemoryType.LONG_TERM, importance=None,
    tags=None, metadata=None, source="", author="", keywords=None, ttl_seconds=None,
    created_at=None, context=None, now=None, context_from=None, valid_from=None,
    valid_until=None, agent_id="", run_id="",
) -> Memory:
    """Validate one memory's fields and return an unsaved Memory (raises InvalidInput etc.).

    ``context`` None (not given): a memory in a conversation gets a server-built one
    (``context_from = "conversation"``, filled by :func:`memory_create`); a given context is
    the client's. ``context_from`` lets a writer name another source (a promoted message).
    ``agent_id``, ``run_id``: the agent scope, identifiers as ``user_id`` ("" or None: none;
    InvalidInput naming the field otherwise)."""
    now = now or timezone.now()
    user_id = clean_identifier(user_id, "user_id")
    conversation_id = clean_identifier(conversation_id, "conversation_id", required=False)
    agent_id, run_id = (clean_identifier(value, name) if value not in (None, "") else ""
                        for name, value in (("agent_id", agent_id), ("run_id", run_id)))
    content = clean_content(content)
    type = clean_type(type)
    if importance is None:
        importance = importance_estimate.estimate(content, author=author).score
    importance = clean_unit_float(importance, "importance")
    created = _aware(created_at) if created_at else now
    valid_from = _aware(valid_from) if valid_from else created
    valid_until = _aware(valid_until) if valid_until else None
    if valid_until is not None and valid_until < valid_from:
        raise InvalidInput("valid_until must not be before valid_from", field="valid_until")
    expire_at = None
    if type == MemoryType.SHORT_TERM:
        ttl = settings.MEMORY_SHORT_TERM_TTL_SECONDS if ttl_seconds is None else ttl_seconds
        if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= MAX_TTL_SECONDS:
            raise InvalidInput(f"ttl_seconds must be 1..{MAX_TTL_SECONDS}", field="ttl_seconds")
        expire_at = now + dt.timedelta(seconds=ttl)
    elif ttl_seconds is not None:
        raise InvalidInput("ttl_seconds applies to short_term memories only", field="ttl_seconds")
    for name, value, limit in (("source", source, 64), ("author", author, 128)):
        if not isinstance(value, str) or len(value) > limit:
            raise InvalidInput(f"{name} must be a string of at most {limit} characters",
                               field=name)
        clean_text(value, name, kind=LINE)
    if context is None:
        context = ""
        if context_from is None:
            context_from = context_service.CONVERSATION if conversation_id else ""
    clean_context(context)
    if context_from is None:
        context_from = context_service.CLIENT if context else ""
    return Memory(
        user_id=user_id, conversation_id=conversation_id, type=type, content=content,
        context=context, context_from=context_from,
        keywords=clean_string_list(keywords or [], "keywords"),
        tags=clean_string_list(tags or [], "tags"), importance=importance,
        created_at=created, updated_at=now, expire_at=expire_at, valid_from=valid_from,
        valid_until=valid_until,
        source=source or "",
        author=author or "", metadata=clean_metadata(metadata), agent_id=agent_id,
        run_id=run_id, content_hash=content_hash(content), content_folded=fold(content), version=1,
    )


def _insert_with_history(memories: list[Memory], *, kind: str, actor, reason: str,
                         now=None, batch_size: int = 500) -> None:
    """Insert unsaved ``memories`` and the first history version of each with
    simple-history's ``bulk_create_with_history``: the one insert path of a single create and
    of a bulk one (one INSERT per table and batch).

    It sends no ``post_save``, so it passes what a save's receivers gave the version:
    user, reason and date as simple-history takes them (``actor`` when it is a user, else
    the request's user), the kind and actor (``memories.history.history_attrs``), and the
    metrics count, on commit (``integrations.metrics.receivers`` counts the versions that
    simple-history saves one by one). ``tests/test_create_insert.py`` compares the rows with
    those of ``save()``."""
    if not memories:
        return
    bulk_create_with_history(
        memories, Memory, batch_size=batch_size,
        default_user=None if actor is None or isinstance(actor, str) else actor,
        default_change_reason=reason or "", default_date=now or timezone.now(),
        custom_historical_attrs=history_attrs(kind, actor))
    transaction.on_commit(functools.partial(count_write, kind, len(memories)))


@tracing.write_span("create_memory")
def memory_create(*, actor=None, kind: str = ChangeKind.CREATE, reason: str = "",
                  supersedes=None, supersession=None, **fields) -> tuple[Memory, bool]:
    """Create one memory; fields as ``build_memory`` takes them.

    Returns ``(memory, deduplicated)``: a live memory with the same content hash, user,
    conversation, type and ``agent_id`` is returned instead of writing a new one.
    ``supersedes``: ids of memories of the namespace and of the same ``agent_id`` this one
    makes no longer true (``validity.supersede``; another agent's is a 404; applied
    to the live copy on a duplicate, so a retried write is idempotent). ``supersession``:
    off | propose | apply for this write's proposals (``conflicts.propose``; None: the
    setting). Raises InvalidInput (400), NotFound (404: a superseded id), Conflict (409: a
    cycle), TooLarge (413). Searchable when this returns (sync on commit).
    """
    # Validation, hashing and the importance estimate touch no table: done before the
    # transaction, they do not lengthen the write lock SQLite holds for all of it.
    memory = build_memory(**fields)
    mode = conflicts.clean_mode(supersession)
    if supersedes is not None:
        supersedes = validity.clean_supersedes(supersedes)
    with transaction.atomic():
        existing, window = _duplicate_and_window(memory)
        if existing is not None:
            if supersedes:
                validity.supersede(newer=existing, older_ids=supersedes, actor=actor,
                                   reason=reason)
            return existing, True
        if memory.context_from == context_service.CONVERSATION:
            memory.context = window.context()
        _insert_with_history([memory], kind=kind, actor=actor, reason=reason)
        outbox.outbox_memory_event(memory, kind=kind, actor=actor, reason=reason)
        if supersedes:
            validity.supersede(newer=memory, older_ids=supersedes, actor=actor, reason=reason)
        conflicts.propose([memory], mode=mode, actor=actor)
        # The new memory and the neighbours whose context it changed: one Redis round trip.
        sync_instances_after_commit([memory, *window.arrived()])
    return memory, False


@tracing.write_span("create_memory")
@transaction.atomic
def memory_create_many(*, items: list[dict], actor=None, reason: str = "",
                       supersession=None) -> list[tuple[Memory, bool]]:
    """Bulk create (imports, benchmarks): validation and dedup as :func:`memory_create`.

    All or nothing: the first invalid item raises (with ``index`` in the error) and nothing
    is written. An item in a conversation without ``context`` gets a server-built one from
    its neighbours in the batch and in the database, and the stored memories it neighbours
    are rebuilt (``memories.services.context.batch_contexts``). One INSERT per 500 rows plus
    their history rows (``_insert_with_history``); the Redis mirror is written after commit
    in pipelined batches. Returns ``[(memory, deduplicated)]`` in input order.
    """
    now = timezone.now()
    built = []
    for n, item in enumerate(items):
        try:
            # An item without ``context`` in a conversation gets a server-built one, as a
            # single create does (context.batch_contexts, below, once the batch is known).
            built.append(build_memory(now=now, **item))
        except (InvalidInput, TooLarge) as exc:
            exc.extra["index"] = n
            raise
        except TypeError as exc:
            raise InvalidInput(f"item {n}: {exc}", field="items", index=n) from exc
    # Dedup against the database and within the batch itself.
    keys = {(m.user_id, m.conversation_id, m.type, m.content_hash) for m in built}
    key = operator.attrgetter("user_id", "conversation_id", "type", "content_hash",
                              "agent_id")
    existing: dict[tuple, Memory] = {}
    hashes = {k[3] for k in keys}
    for start in range(0, len(hashes), 500):
        chunk = list(hashes)[start:start + 500]
        for m in Memory.objects.filter(content_hash__in=chunk, deleted_at__isnull=True):
            existing.setdefault(key(m), m)
    out, new = [], []
    for m in built:
        k = key(m)
        if k in existing:
            out.append((existing[k], True))
            continue
        existing[k] = m
        new.append(m)
        out.append((m, False))
    context_service.batch_contexts(new)
    _insert_with_history(new, kind=ChangeKind.CREATE, actor=actor, reason=reason, now=now)
    outbox.outbox_memories_created(new, actor=actor, reason=reason)
    conflicts.propose(new, mode=conflicts.clean_mode(supersession), actor=actor)
    ids = [m.memory_id for m in new]
    # The instances are what committed (bulk_create): mirrored without reading them again.
    transaction.on_commit(lambda: sync_memories(ids, memories=new))
    return out
