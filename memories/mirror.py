"""The Redis hot-store mirror of the memory rows: ``sync_memory`` (idempotent by id) and the
bulk ``sync_memories``. Called after commit by the writers and by reindex/reconcile.
"""

import datetime as dt
import json
import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories import store
from memories.models import Memory
from search.index import fields as index_fields
from search.index import postings

log = logging.getLogger(__name__)

# The version a purge writes to Redis: above any real version, so a late sync of an older
# version never brings a purged memory back.
PURGED_VERSION = 2**31

# --- Redis mirror -------------------------------------------------------------------------

class Unmirrorable(ValueError):
    """A row Redis cannot take as it is (text no UTF-8 can encode: rows written before the
    text check of ``memories.validation``). Never raised out of a sync: the row is flagged
    (``needs_resync`` + ``index_error``), logged and counted, and the batch goes on."""


def marks():
    """``memories.services.marks``, the writer of the rows' ``needs_resync`` and
    ``index_error``. Imported when called: the services import this module."""
    from memories.services import marks

    return marks


def _check_encodable(args: dict) -> None:
    """Raise Unmirrorable when a value of ``args`` would fail in the Redis client's UTF-8
    encoder: checked before queueing, because in a pipeline that failure would take every
    other row of the batch with it."""
    for name, value in args["hash_fields"].items():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Unmirrorable(f"{name} holds text Redis cannot encode") from None
    try:
        args["record"].text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unmirrorable("a term Redis cannot encode") from None


def _flag_unmirrorable(memory: Memory, exc: Exception) -> None:
    reason = (str(exc) if isinstance(exc, Unmirrorable) else type(exc).__name__)[:200]
    log.error("memory %s cannot be mirrored to Redis: %s", memory.memory_id, reason)
    marks().memory_mark_unmirrorable(memory_id=memory.memory_id, reason=reason)
    memory.needs_resync, memory.index_error = True, reason


def _removal_args(memory: Memory) -> dict:
    return {"user_id": memory.user_id, "memory_id": memory.memory_id,
            "version": memory.version, "hash_fields": {}, "record": postings.Record()}


def mirror_args_or_flag(memory: Memory, now: dt.datetime) -> tuple[dict, bool]:
    """``(mirror_args, True)`` of a row; for a row that cannot be mirrored (see
    :class:`Unmirrorable`: flagged and logged) ``(removal args, False)``: Redis then drops
    whatever older state it holds of the row, so no stale copy is served, and a batch goes
    on with the other rows."""
    try:
        return mirror_args(memory, now), True
    except Exception as exc:  # noqa: BLE001 - one bad row never stops a batch
        _flag_unmirrorable(memory, exc)
        return _removal_args(memory), False

def sync_after_commit(memory: Memory) -> None:
    # The saved instance is what committed; the version guard in put.lua refuses it should
    # a later version of the row reach Redis first.
    transaction.on_commit(lambda: sync_memory(memory.memory_id, memory=memory))


def sync_instances_after_commit(memories: list[Memory]) -> None:
    """:func:`sync_instances` of these saved instances once the transaction commits."""
    transaction.on_commit(lambda: sync_instances(memories))


def sync_instances(memories: list[Memory]) -> bool:
    """:func:`sync_memory` of several rows as just committed, in one Redis round trip (one
    pipeline: every ``put.lua`` and the namespace registry). Same guarantees: each row is
    mirrored atomically, a failed Redis flags them all ``needs_resync`` (instances too), a
    row Redis cannot take is flagged ``index_error``. Returns False when any was flagged;
    never raises RedisError."""
    if not memories:
        return True
    now = timezone.now()
    built = [(memory, *mirror_args_or_flag(memory, now)) for memory in memories]
    users = sorted({memory.user_id for memory in memories})

    def run(client, cluster):
        pipes = store.NamespacePipelines(client)
        _queue_puts(pipes, [args for _, args, _ in built])
        if not cluster:  # one slot per pipeline on a cluster: the registry goes apart
            pipes.for_namespace(users[0]).sadd(store.global_key("namespaces"), *users)
        pipes.execute()

    try:
        client = store.get_client()  # a Cluster client connects here: inside the try
        cluster = store.is_cluster(client)
        postings.run_with_scripts(client, lambda: run(client, cluster))
        if cluster:
            _note_namespaces(set(users))
    except store.RedisError as exc:
        log.warning("redis mirror failed for %d memories: %s", len(memories),
                    type(exc).__name__)
        marks().memories_mark_resync(memory_ids=[m.memory_id for m in memories])
        for memory in memories:
            memory.needs_resync = True
        return False
    stale = [m for m, _, ok in built if ok and (m.needs_resync or m.index_error)]
    if stale:
        marks().memories_mark_mirrored(memory_ids=[m.memory_id for m in stale])
        for memory in stale:
            memory.needs_resync, memory.index_error = False, ""
    return all(ok for _, _, ok in built)


def _is_live(memory: Memory, now: dt.datetime) -> bool:
    return memory.deleted_at is None and (memory.expire_at is None or memory.expire_at > now)


def mirror_args(memory: Memory, now: dt.datetime) -> dict:
    """Keyword arguments of ``postings.put_memory`` for a row: the hot-store hash (its empty
    fields left out: a reader takes an absent field as empty: ``search.serving.documents.hash_of``) and the index
    record. A dead row (forgotten, expired) maps to an empty hash and record, which removes
    it."""
    if not _is_live(memory, now):
        return _removal_args(memory)
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
        "author": memory.author,
        "agent_id": memory.agent_id,
        "run_id": memory.run_id,
        "metadata": json.dumps(memory.metadata, ensure_ascii=False),
        "created_at": repr(memory.created_at.timestamp()),
        "accessed_at": repr(memory.accessed_at.timestamp()) if memory.accessed_at else "",
        "access_count": str(memory.access_count),
        "version": str(memory.version),
        "expire_at": repr(memory.expire_at.timestamp()) if memory.expire_at else "",
        "indexed_at": repr(now.timestamp()),
        "valid_from": repr(memory.valid_from.timestamp()),
        "valid_until": repr(memory.valid_until.timestamp()) if memory.valid_until else "",
        "superseded_by": memory.superseded_by or "",
    }
    meta = {
        "type": memory.type,
        "conv": memory.conversation_id or "",
        "exp": repr(memory.expire_at.timestamp()) if memory.expire_at else "",
        # Validity (search.serving.engine): from, and until only once the fact ended.
        "vf": repr(memory.valid_from.timestamp()),
        "vu": repr(memory.valid_until.timestamp()) if memory.valid_until else "",
    }
    plain, context_tf = index_fields.record_terms(memory.content, memory.context)
    args = {"user_id": memory.user_id, "memory_id": memory.memory_id,
            "version": memory.version,
            "hash_fields": {name: value for name, value in hash_fields.items() if value},
            "record": postings.Record(index_fields.record_text(plain, context_tf, meta)),
            "ttl_seconds": ttl}
    _check_encodable(args)
    return args


def sync_memories(memory_ids: list[str], *, batch: int = 500,
                  memories: list[Memory] | None = None) -> int:
    """Idempotently bring Redis in line with the database for these ids (pipelined).

    Ids without a row are skipped (a purge removes its own keys, see :func:`sync_memory`).
    ``memories``: the rows as just committed (a bulk create), mirrored without reading them
    again; ``memory_ids`` is then ignored. Returns how many were synced. On ``RedisError``
    the rows are flagged ``needs_resync`` (logged, never raised); a row Redis cannot take is
    flagged, logged and skipped (``index_error``), the others synced.
    """
    done = 0
    total = len(memory_ids) if memories is None else len(memories)
    for start in range(0, total, batch):
        if memories is None:
            chunk = memory_ids[start:start + batch]
            rows = list(Memory.objects.filter(memory_id__in=chunk))
        else:
            rows = memories[start:start + batch]
            chunk = [m.memory_id for m in rows]
        try:
            rows = _put_rows(store.get_client(), rows, timezone.now())
        except store.RedisError as exc:
            log.warning("redis mirror failed for %d memories: %s", len(rows), type(exc).__name__)
            marks().memories_mark_resync(memory_ids=chunk)
            continue
        stale = [m.memory_id for m in rows if m.needs_resync or m.index_error]
        if stale:
            marks().memories_mark_mirrored(memory_ids=stale)
        _note_namespaces({m.user_id for m in rows})
        done += len(rows)
    return done


def _put_rows(client, rows: list[Memory], now: dt.datetime) -> list[Memory]:
    """Mirror ``rows`` in one pipeline; returns those Redis could take (raises RedisError)."""
    built = [(memory, *mirror_args_or_flag(memory, now)) for memory in rows]
    puts = [args for _, args, _ in built]

    def run():
        pipes = store.NamespacePipelines(client)
        _queue_puts(pipes, puts)
        pipes.execute()

    postings.run_with_scripts(client, run)
    return [memory for memory, _, ok in built if ok]


def _queue_puts(pipes, puts: list[dict]) -> None:
    """Queue ``puts`` on the namespaces' pipelines, several memories per put.lua call."""
    by_namespace: dict[str, list[dict]] = {}
    for args in puts:
        by_namespace.setdefault(args["user_id"], []).append(args)
    for user_id, group in by_namespace.items():
        postings.queue_puts(pipes.for_namespace(user_id), group,
                            stream_maxlen=settings.MEMORY_STREAM_MAXLEN)


def _put(client, args: dict) -> None:
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
    database's. Returns False when Redis failed or cannot take the row (flagged
    ``needs_resync``; ``index_error`` says why for the latter), True otherwise. Never raises
    RedisError, nor fails on the row's content: it runs after the commit, where an error
    would turn a committed write into a 500.
    """
    if memory is None:
        memory = Memory.objects.filter(memory_id=memory_id).first()
    if memory is not None:
        return sync_instances([memory])
    if user_id is None:
        return True
    try:
        # Purged: no row, no version; a version above any real one removes it.
        _put(store.get_client(), {
            "user_id": user_id, "memory_id": memory_id, "version": PURGED_VERSION,
            "hash_fields": {}, "record": postings.Record()})
    except store.RedisError as exc:
        # No row to flag: reads drop it, the reconcile removes it.
        log.warning("redis mirror failed for %s: %s", memory_id, type(exc).__name__)
        return False
    return True
