"""The only writers of Memory (and its history), and the Redis mirror that follows them.

Every public function is keyword-only and runs in one database transaction. The Redis mirror
is brought in line by :func:`sync_memory` from ``transaction.on_commit``, in this process, so
a memory is searchable when the call returns; if Redis is down the database write still
stands, the row is flagged ``needs_resync`` and ``reconcile`` repairs it.
"""

import datetime as dt
import hashlib
import json
import logging
import unicodedata

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from memories import importance as importance_estimate
from memories import store
from memories.errors import Conflict, InvalidInput, NotFound, TooLarge
from memories.index import fields as index_fields
from memories.index import postings
from memories.models import AccessFold, AuditEvent, ChangeKind, Memory, MemoryType
from memories.validation import (
    MEMORY_ID_RE,
    clean_identifier,
    clean_string_list,
    clean_unit_float,
)

log = logging.getLogger(__name__)

MAX_METADATA_BYTES = 16384
MAX_TTL_SECONDS = 365 * 24 * 3600
PURGED_VERSION = 2**31


def content_hash(content: str) -> str:
    """SHA-256 hex of the NFKC-normalised, stripped content (the dedup key)."""
    return hashlib.sha256(unicodedata.normalize("NFKC", content).strip().encode()).hexdigest()


def _actor_name(actor) -> str:
    if actor is None:
        return "system"
    return actor if isinstance(actor, str) else actor.get_username()


def _stamp(memory: Memory, kind: str, actor, reason: str) -> None:
    """Tell the history receiver what this save is (see memories.history)."""
    memory._history_kind = kind
    memory._history_actor = _actor_name(actor)
    memory._change_reason = reason or ""
    if actor is not None and not isinstance(actor, str):
        memory._history_user = actor


def _clean_content(content) -> str:
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
    return content


def _clean_metadata(metadata) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object", field="metadata")
    try:
        encoded = json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("metadata must be plain JSON (no NaN)", field="metadata") from exc
    if len(encoded.encode()) > MAX_METADATA_BYTES:
        raise TooLarge(f"metadata is over {MAX_METADATA_BYTES} bytes", field="metadata",
                       limit=MAX_METADATA_BYTES)
    return metadata


def _clean_type(value) -> str:
    if value not in MemoryType.values:
        raise InvalidInput(f"type must be one of {', '.join(MemoryType.values)}", field="type")
    return value


def _aware(value: dt.datetime) -> dt.datetime:
    """Naive datetimes (imports, fixtures) are taken as UTC, never compared naive."""
    if timezone.is_naive(value):
        return value.replace(tzinfo=dt.UTC)
    return value


def _live_duplicate(*, user_id, conversation_id, type, chash) -> Memory | None:
    return (
        Memory.objects.filter(
            user_id=user_id, conversation_id=conversation_id, type=type, content_hash=chash,
            deleted_at__isnull=True,
        )
        .order_by("created_at", "memory_id")
        .first()
    )


def _build_memory(
    *, user_id, content, conversation_id=None, type=MemoryType.LONG_TERM, importance=None,
    tags=None, metadata=None, source="", author="", keywords=None, ttl_seconds=None,
    created_at=None, context="", now=None,
) -> Memory:
    """Validate one memory's fields and return an unsaved Memory (raises InvalidInput etc.)."""
    now = now or timezone.now()
    user_id = clean_identifier(user_id, "user_id")
    conversation_id = clean_identifier(conversation_id, "conversation_id", required=False)
    content = _clean_content(content)
    type = _clean_type(type)
    if importance is None:
        importance = importance_estimate.estimate(content, author=author).score
    importance = clean_unit_float(importance, "importance")
    created = _aware(created_at) if created_at else now
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
    if not isinstance(context, str) or len(context) > settings.MEMORY_MAX_CONTENT_CHARS:
        raise InvalidInput("context must be a string no longer than the content limit",
                           field="context")
    return Memory(
        user_id=user_id, conversation_id=conversation_id, type=type, content=content,
        context=context,
        keywords=clean_string_list(keywords or [], "keywords"),
        tags=clean_string_list(tags or [], "tags"), importance=importance,
        created_at=created, updated_at=now, expire_at=expire_at, source=source or "",
        author=author or "", metadata=_clean_metadata(metadata),
        content_hash=content_hash(content), version=1,
    )


def memory_create(*, actor=None, kind: str = ChangeKind.CREATE, reason: str = "",
                  **fields) -> tuple[Memory, bool]:
    """Create one memory; fields as ``_build_memory`` takes them.

    Returns ``(memory, deduplicated)``: a live memory with the same content hash, user,
    conversation and type is returned instead of writing a new one. Raises InvalidInput
    (400), TooLarge (413). Searchable when this returns (sync on commit).
    """
    # Validation, hashing and the importance estimate touch no table: done before the
    # transaction, they do not lengthen the write lock SQLite holds for all of it.
    memory = _build_memory(**fields)
    with transaction.atomic():
        existing = _live_duplicate(user_id=memory.user_id,
                                   conversation_id=memory.conversation_id,
                                   type=memory.type, chash=memory.content_hash)
        if existing is not None:
            return existing, True
        _stamp(memory, kind, actor, reason)
        memory.save(force_insert=True)
        _sync_after_commit(memory)
    return memory, False


@transaction.atomic
def memory_create_many(*, items: list[dict], actor=None, reason: str = "") -> list[tuple[Memory, bool]]:
    """Bulk create (imports, benchmarks): validation and dedup as :func:`memory_create`.

    All or nothing: the first invalid item raises (with ``index`` in the error) and nothing
    is written. One INSERT per 500 rows plus their history rows; the Redis mirror is
    written after commit in pipelined batches. Returns ``[(memory, deduplicated)]`` in
    input order.
    """
    now = timezone.now()
    built = []
    for n, item in enumerate(items):
        try:
            built.append(_build_memory(now=now, **item))
        except (InvalidInput, TooLarge) as exc:
            exc.extra["index"] = n
            raise
        except TypeError as exc:
            raise InvalidInput(f"item {n}: {exc}", field="items", index=n) from exc
    # Dedup against the database and within the batch itself.
    keys = {(m.user_id, m.conversation_id, m.type, m.content_hash) for m in built}
    existing: dict[tuple, Memory] = {}
    hashes = {k[3] for k in keys}
    for start in range(0, len(hashes), 500):
        chunk = list(hashes)[start:start + 500]
        for m in Memory.objects.filter(content_hash__in=chunk, deleted_at__isnull=True):
            existing.setdefault((m.user_id, m.conversation_id, m.type, m.content_hash), m)
    out, new = [], []
    for m in built:
        k = (m.user_id, m.conversation_id, m.type, m.content_hash)
        if k in existing:
            out.append((existing[k], True))
            continue
        existing[k] = m
        new.append(m)
        out.append((m, False))
    bulk_create_with_history(
        new, Memory, batch_size=500, default_change_reason=reason, default_date=now,
        custom_historical_attrs={"kind": ChangeKind.CREATE, "changed_by": _actor_name(actor)},
        default_user=None if actor is None or isinstance(actor, str) else actor,
    )
    ids = [m.memory_id for m in new]
    transaction.on_commit(lambda: sync_memories(ids))
    return out


def _get_for_update(memory_id) -> Memory:
    if not isinstance(memory_id, str) or not MEMORY_ID_RE.match(memory_id):
        raise NotFound(f"memory {memory_id!r} not found", field="memory_id")
    try:
        return Memory.objects.select_for_update().get(memory_id=memory_id)
    except Memory.DoesNotExist:
        raise NotFound(f"memory {memory_id} not found", field="memory_id") from None


def _save_version(memory: Memory, *, kind: str, actor, reason: str) -> Memory:
    memory.version += 1
    memory.updated_at = timezone.now()
    _stamp(memory, kind, actor, reason)
    memory.save()
    _sync_after_commit(memory)
    return memory


@transaction.atomic
def memory_update(
    *, memory_id: str, actor=None, reason: str = "", expected_version: int | None = None,
    content=None, importance=None, tags=None, type=None, metadata=None,
) -> Memory:
    """Write a new version with the given fields changed.

    ``expected_version`` (optimistic locking) raises Conflict (409, ``current_version`` in
    the body) when the memory has moved on, and for a forgotten memory (restore first). A call
    that changes nothing writes no version. The kind is ``importance`` when only importance
    changed, else ``edit``.
    """
    memory = _get_for_update(memory_id)
    if memory.deleted_at is not None:
        raise Conflict(f"memory {memory_id} is forgotten; restore it first",
                       field="memory_id", current_version=memory.version)
    if expected_version is not None and expected_version != memory.version:
        raise Conflict(
            f"memory {memory_id} is at version {memory.version}, not {expected_version}",
            field="version", current_version=memory.version,
        )
    changed = set()
    if content is not None:
        content = _clean_content(content)
        if content != memory.content:
            memory.content, memory.content_hash = content, content_hash(content)
            changed.add("content")
    if importance is not None:
        importance = clean_unit_float(importance, "importance")
        if importance != memory.importance:
            memory.importance = importance
            changed.add("importance")
    if tags is not None:
        tags = clean_string_list(tags, "tags")
        if tags != memory.tags:
            memory.tags = tags
            changed.add("tags")
    if type is not None and _clean_type(type) != memory.type:
        memory.type = type
        changed.add("type")
        if type != MemoryType.SHORT_TERM:
            memory.expire_at = None
        elif memory.expire_at is None:
            memory.expire_at = timezone.now() + dt.timedelta(
                seconds=settings.MEMORY_SHORT_TERM_TTL_SECONDS)
    if metadata is not None and _clean_metadata(metadata) != memory.metadata:
        memory.metadata = metadata
        changed.add("metadata")
    if not changed:
        return memory
    kind = ChangeKind.IMPORTANCE if changed == {"importance"} else ChangeKind.EDIT
    return _save_version(memory, kind=kind, actor=actor, reason=reason)


@transaction.atomic
def memory_forget(*, memory_id: str, actor=None, reason: str = "",
                  kind: str = ChangeKind.FORGET) -> Memory:
    """Soft delete: the row and its history stay; it leaves search and the index.

    ``kind`` may say why (``archive`` by the policy, ``rollback`` of a consolidation).
    Forgetting a forgotten memory changes nothing. Raises NotFound.
    """
    memory = _get_for_update(memory_id)
    if memory.deleted_at is not None:
        return memory
    memory.deleted_at = timezone.now()
    memory.deleted_by = _actor_name(actor)
    return _save_version(memory, kind=kind, actor=actor, reason=reason)


@transaction.atomic
def memory_restore(*, memory_id: str, actor=None, reason: str = "") -> Memory:
    """Bring a forgotten memory back into search (a new version). Raises NotFound."""
    memory = _get_for_update(memory_id)
    if memory.deleted_at is None:
        return memory
    memory.deleted_at = None
    memory.deleted_by = ""
    return _save_version(memory, kind=ChangeKind.RESTORE, actor=actor, reason=reason)


@transaction.atomic
def memory_rollback(*, memory_id: str, version: int, actor=None, reason: str) -> Memory:
    """New version equal to ``version`` in content, importance, tags and type.

    Ids, namespace, access counters and other memories are never touched; history is never
    rewritten. A forgotten memory comes back if the target version was live. Raises
    InvalidInput (no reason / not an earlier version), NotFound.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a reason is required for a rollback", field="reason")
    memory = _get_for_update(memory_id)
    if version == 0 and (memory.metadata or {}).get("consolidated_from"):
        # Version 0 of a consolidated memory is "before the consolidation".
        from memories.policy import consolidation_undo

        consolidation_undo(memory_id=memory_id, actor=actor, reason=reason)
        memory.refresh_from_db()
        return memory
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version < memory.version:
        raise InvalidInput(f"version must be an earlier version (1..{memory.version - 1})",
                           field="version")
    old = memory.history.filter(version=version).order_by("-history_id").first()
    if old is None:
        raise NotFound(f"version {version} of {memory_id} not found", field="version")
    memory.content, memory.content_hash = old.content, content_hash(old.content)
    memory.importance, memory.tags, memory.type = old.importance, old.tags, old.type
    memory.expire_at = old.expire_at if old.type == MemoryType.SHORT_TERM else None
    memory.deleted_at = old.deleted_at
    memory.deleted_by = old.deleted_by
    memory = _save_version(memory, kind=ChangeKind.ROLLBACK, actor=actor, reason=reason)
    audit_record(actor=actor, action="rollback", target=memory_id, reason=reason,
                 data={"to_version": version, "new_version": memory.version})
    return memory


@transaction.atomic
def memory_promote(*, memory_id: str, actor=None, reason: str = "") -> tuple[Memory, bool]:
    """Turn a working or short-term memory into a user-wide long-term one.

    A new memory (kind ``promote``, ``metadata.promoted_from``) is written through the same
    dedup as every write: if the user already has that content as a long-term user-wide
    memory, that one is returned with ``deduplicated`` True. Raises InvalidInput for a
    long-term memory, NotFound.
    """
    source = _get_for_update(memory_id)
    if source.type == MemoryType.LONG_TERM and source.conversation_id is None:
        raise InvalidInput("memory is already a user-wide long-term memory", field="memory_id")
    return memory_create(
        actor=actor, kind=ChangeKind.PROMOTE, reason=reason, user_id=source.user_id,
        content=source.content, conversation_id=None, type=MemoryType.LONG_TERM,
        importance=source.importance, tags=source.tags, source=source.source,
        author=source.author, keywords=source.keywords,
        metadata={**source.metadata, "promoted_from": memory_id})


@transaction.atomic
def message_promote(*, session_id: str, seq: int, actor=None,
                    reason: str = "") -> tuple[Memory, bool]:
    """Promote one session message to a user-wide long-term memory (deduplicated)."""
    from memories.models import Message

    message = Message.objects.select_related("session").filter(
        session_id=session_id, seq=seq).first()
    if message is None:
        raise NotFound(f"message {seq} of session {session_id!r} not found", field="seq")
    return memory_create(
        actor=actor, kind=ChangeKind.PROMOTE, reason=reason,
        user_id=message.session.user_id, content=message.content, type=MemoryType.LONG_TERM,
        source="session", author=message.role,
        metadata={"promoted_from": {"session_id": session_id, "seq": seq}})


BULK_ACTIONS = ("importance", "forget", "restore")


@transaction.atomic
def memory_bulk(*, memory_ids: list[str], action: str, actor=None, importance=None,
                reason: str = "") -> list[Memory]:
    """Apply one action to several memories, all or nothing; each memory gets its own
    version (so a later rollback of one never touches the others). ``action`` is
    ``importance`` (with ``importance``), ``forget`` or ``restore``. Raises InvalidInput,
    NotFound."""
    if action not in BULK_ACTIONS:
        raise InvalidInput(f"action must be one of {', '.join(BULK_ACTIONS)}", field="action")
    if not memory_ids or len(memory_ids) > 500:
        raise InvalidInput("select 1 to 500 memories", field="memory_ids")
    out = []
    for memory_id in dict.fromkeys(memory_ids):
        if action == "importance":
            if importance is None:
                raise InvalidInput("importance is required", field="importance")
            out.append(memory_update(memory_id=memory_id, importance=importance, actor=actor,
                                     reason=reason))
        elif action == "forget":
            out.append(memory_forget(memory_id=memory_id, actor=actor, reason=reason))
        else:
            out.append(memory_restore(memory_id=memory_id, actor=actor, reason=reason))
    return out


def memory_access_apply(*, batch_id: str, user_id: str,
                        hits: dict[str, tuple[int, dt.datetime]]) -> int:
    """Add one batch of recall hits (``{memory_id: (hits, last hit time)}``, see
    ``memories.access``) to ``access_count``/``accessed_at``, exactly once per ``batch_id``.

    No new version and no ``updated_at`` change; ids without a row (purged) are skipped.
    Returns the hits applied: 0 when this batch was applied before.
    """
    # One prepared UPDATE run per memory: an ORM update() cannot add a different count and
    # time to each row except through a CASE over the whole batch, which SQLite evaluates
    # per row while it holds the write lock (folds then stalled every other write).
    qn = connection.ops.quote_name
    # accessed_at only moves forward: batches may be applied out of order (one left by a
    # crash, two folders at once).
    count, at = qn("access_count"), qn("accessed_at")
    sql = (f"UPDATE {qn(Memory._meta.db_table)} SET {count} = {count} + %s, {at} = CASE "
           f"WHEN {at} IS NULL OR {at} < %s THEN %s ELSE {at} END WHERE {qn('memory_id')} = %s")
    rows = []
    for memory_id, (n, last_hit) in sorted(hits.items()):
        last_hit = connection.ops.adapt_datetimefield_value(last_hit)
        rows.append((n, last_hit, last_hit, memory_id))
    total = sum(n for n, _ in hits.values())
    try:
        with transaction.atomic():
            AccessFold.objects.create(batch_id=batch_id, user_id=user_id, hits=total)
            with connection.cursor() as cursor:
                cursor.executemany(sql, rows)
    except IntegrityError:
        return 0
    return total


def access_folds_prune(*, older_than: dt.timedelta = dt.timedelta(days=1)) -> int:
    """Delete ``AccessFold`` records older than ``older_than``; returns how many. A batch
    is deleted from Redis right after its record is written, so a day-old record guards
    nothing any more."""
    deleted, _ = AccessFold.objects.filter(folded_at__lt=timezone.now() - older_than).delete()
    return deleted


def audit_record(*, actor, action: str, target: str, reason: str = "", data=None) -> AuditEvent:
    """Append one audit event (never with memory content)."""
    return AuditEvent.objects.create(actor=_actor_name(actor), action=action, target=target,
                                     reason=reason or "", data=data or {})


# --- Redis mirror -------------------------------------------------------------------------

def _sync_after_commit(memory: Memory) -> None:
    # The saved instance is what committed; the version guard in put.lua refuses it should
    # a later version of the row reach Redis first.
    transaction.on_commit(lambda: sync_memory(memory.memory_id, memory=memory))


def _is_live(memory: Memory, now: dt.datetime) -> bool:
    return memory.deleted_at is None and (memory.expire_at is None or memory.expire_at > now)


def mirror_args(memory: Memory, now: dt.datetime) -> dict:
    """Keyword arguments of ``postings.put_memory`` for a row: the hot-store hash, filter
    fields and every index field's term frequencies. A dead row (forgotten, expired) maps to
    an empty hash and no fields, which removes it."""
    if not _is_live(memory, now):
        return {"user_id": memory.user_id, "memory_id": memory.memory_id,
                "version": memory.version, "hash_fields": {}, "filter_fields": {}, "fields": []}
    ttl = 0
    if memory.expire_at is not None:
        ttl = max(1, int((memory.expire_at - now).total_seconds()))
    hash_fields = {
        "memory_id": memory.memory_id,
        "user_id": memory.user_id,
        "conversation_id": memory.conversation_id or "",
        "type": memory.type,
        "content": memory.content,
        "importance": repr(float(memory.importance)),
        "tags": json.dumps(memory.tags, ensure_ascii=False),
        "metadata": json.dumps(memory.metadata, ensure_ascii=False),
        "created_at": repr(memory.created_at.timestamp()),
        "accessed_at": repr(memory.accessed_at.timestamp()) if memory.accessed_at else "",
        "access_count": str(memory.access_count),
        "version": str(memory.version),
        "expire_at": repr(memory.expire_at.timestamp()) if memory.expire_at else "",
        "indexed_at": repr(now.timestamp()),
    }
    filter_fields = {
        "#type": memory.type,
        "#conv": memory.conversation_id or "",
        "#exp": repr(memory.expire_at.timestamp()) if memory.expire_at else "",
    }
    fields = [
        postings.FieldTerms(name, analyzer.term_frequencies(
            index_fields.field_text(name, memory.content, memory.context)))
        for name, analyzer in index_fields.ANALYZERS.items()
    ]
    return {"user_id": memory.user_id, "memory_id": memory.memory_id,
            "version": memory.version, "hash_fields": hash_fields,
            "filter_fields": filter_fields, "fields": [f for f in fields if f.tf], "ttl_seconds": ttl}


def sync_memories(memory_ids: list[str], *, batch: int = 500) -> int:
    """Idempotently bring Redis in line with the database for these ids (pipelined).

    Ids without a row are skipped (a purge removes its own keys, see :func:`sync_memory`).
    Returns how many were synced. On ``RedisError`` the rows are flagged ``needs_resync``
    (logged, never raised).
    """
    done = 0
    for start in range(0, len(memory_ids), batch):
        chunk = memory_ids[start:start + batch]
        rows = list(Memory.objects.filter(memory_id__in=chunk))
        now = timezone.now()
        try:
            client = store.get_client()
            puts = [mirror_args(memory, now) for memory in rows]
            pipes = store.NamespacePipelines(client)
            _seed_reference_lengths(client, pipes, puts)
            for args in puts:
                _queue_put(pipes.for_namespace(args["user_id"]), args)
            pipes.execute()
        except store.RedisError as exc:
            log.warning("redis mirror failed for %d memories: %s", len(rows), type(exc).__name__)
            Memory.objects.filter(memory_id__in=chunk).update(needs_resync=True)
            continue
        stale = [m.memory_id for m in rows if m.needs_resync]
        if stale:
            Memory.objects.filter(memory_id__in=stale).update(needs_resync=False)
        _note_namespaces({m.user_id for m in rows})
        done += len(rows)
    return done


def _seed_reference_lengths(client, pipes, puts: list[dict]) -> None:
    """A namespace's first bulk load sets each field's ``avgdl_ref`` to the batch's own
    average length (HSETNX: never changes an existing one), so the early-termination bound
    starts tight instead of from a guess; a reindex sets the exact value later."""
    lengths: dict[tuple[str, str], list[int]] = {}
    for args in puts:
        for f in args["fields"]:
            lengths.setdefault((args["user_id"], f.field), []).append(f.dl)
    namespaces = sorted({user_id for user_id, _ in lengths})
    gens = dict(zip(namespaces, store.mget(client, [store.key(u, "gen") for u in namespaces]),
                    strict=True))
    for (user_id, field), dls in lengths.items():
        if gens[user_id] is None:  # generation 0 only: a reindexed one has its exact value
            pipes.for_namespace(user_id).hsetnx(store.key(user_id, field, "stats"), "avgdl_ref",
                                                repr(sum(dls) / len(dls)))


def _queue_put(client, args: dict) -> None:
    postings.put_memory(client, stream_maxlen=settings.MEMORY_STREAM_MAXLEN, **args)


def _note_namespaces(user_ids: set[str]) -> None:
    if user_ids:
        store.get_client().sadd(store.global_key("namespaces"), *user_ids)


def sync_memory(memory_id: str, *, user_id: str | None = None,
                memory: Memory | None = None) -> bool:
    """Make Redis match the database row of ``memory_id``, whatever happened before.

    Live row: hash + postings replaced. Forgotten/expired row: removed from Redis. Row gone
    (purged): removed, given its ``user_id``. ``memory`` is the row as just committed (read
    from the database when not given); its ``needs_resync`` is kept in line with the
    database's. Returns False when Redis failed (the row is flagged ``needs_resync``), True
    otherwise. Never raises RedisError.
    """
    if memory is None:
        memory = Memory.objects.filter(memory_id=memory_id).first()
    try:
        if memory is None:
            if user_id is not None:
                # Purged: no row, no version; a version above any real one removes it.
                _queue_put(store.get_client(), {
                    "user_id": user_id, "memory_id": memory_id, "version": PURGED_VERSION,
                    "hash_fields": {}, "filter_fields": {}, "fields": []})
            return True
        _queue_put(store.get_client(), mirror_args(memory, timezone.now()))
        _note_namespaces({memory.user_id})
    except store.RedisError as exc:
        log.warning("redis mirror failed for %s: %s", memory_id, type(exc).__name__)
        Memory.objects.filter(memory_id=memory_id).update(needs_resync=True)
        memory.needs_resync = True
        return False
    if memory.needs_resync:
        Memory.objects.filter(memory_id=memory_id).update(needs_resync=False)
        memory.needs_resync = False
    return True


@transaction.atomic
def memory_purge(*, memory_id: str, actor=None, reason: str = "") -> None:
    """Hard delete (admin): the row and every version of its content are removed; an audit
    event without content records who purged what and why. Raises NotFound."""
    memory = _get_for_update(memory_id)
    user_id = memory.user_id
    memory.delete()
    # After the delete: simple_history adds a "-" row holding the content, which goes too.
    Memory.history.filter(memory_id=memory_id).delete()
    audit_record(actor=actor, action="purge", target=memory_id, reason=reason,
                 data={"user_id": user_id, "versions": memory.version})
    transaction.on_commit(lambda: sync_memory(memory_id, user_id=user_id))
