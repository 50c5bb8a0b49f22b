"""Backup and restore of memories as versioned JSON.

Schema 5 (current): ``{"schema_version": 5, "exported_at", "user_id" | null, "memories":
[{memory fields…, "history": [{version…}]}], "conflicts": [{proposal fields…}],
"sessions": [{session…, "messages": […]}], "lab": {"profiles", "query_sets", "judgments",
"runs"}, "feedback": [{recall feedback…}]}``, every memory with every field (its id,
version, access counts, soft-delete state and validity included) and its versions
(``operations.export_history``), the review queue's proposals and decisions, the sessions
with their transcripts and summaries, the ranking lab's objects and the recall feedback
(``operations.export_extras``; not the recall traces), so an export → replace import round
trip keeps them all. Schemas 1 to 4 still import (``operations.import_document``): schemas
1 and 2 hold memories from their creation, none superseded; before schema 4 a replace
import writes one ``restore`` version per memory and leaves sessions and lab objects as
they are; before schema 5 it leaves the recall feedback as it is. A
document may give its times relative to the import (``operations.relative_times``: the demo
fixture). A merge creates new memories (new ids): it keeps each one's ``valid_from`` and
``valid_until`` but not ``superseded_by``, its history, the proposals, sessions nor lab
objects, whose ids name the document's memories. A ``replace`` import swaps a namespace's
memories (and the rest the document holds) for the document's in one transaction and
reindexes it after commit, so recall never sees old and new mixed; ``merge`` adds what is
new. Both deduplicate as every write does (same content hash, user, conversation and type:
one live memory).
"""

import logging

from django.db import transaction
from django.utils import timezone

from memories import access, services, store
from memories.errors import InvalidInput, ServiceError
from memories.models import Conflict, Memory
from memories.services import conflicts as conflict_service
from memories.services.context import CLIENT, CONVERSATION, COPY, SESSION, batch_contexts
from memories.services.create import build_memory
from memories.text_check import LINE
from memories.validation import MEMORY_ID_RE, clean_text
from operations import export_extras, export_history
from operations.import_document import (
    CONFLICT_FIELDS,
    DATES,
    FIELDS,
    SCHEMA_VERSION,
    document_conflicts,
    document_items,
    document_namespaces,
    item_date,
    item_error,
)
from operations.relative_times import resolve_times

__all__ = ["FIELDS", "SCHEMA_VERSION", "export_memories", "import_memories"]

log = logging.getLogger(__name__)

CONTEXT_SOURCES = (CLIENT, CONVERSATION, SESSION, COPY)


def export_memories(*, user_id: str | None = None) -> dict:
    """One namespace (or every one) as a schema-5 document, pending recall hits folded in
    first (``memories.access``)."""
    access.access_fold_quietly(user_ids=None if user_id is None else [user_id])
    rows = Memory.objects.order_by("user_id", "created_at", "memory_id")
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    memories = []
    for m in rows.iterator(chunk_size=2000):
        item = {f: getattr(m, f) for f in FIELDS}
        for f in DATES:
            item[f] = item[f].isoformat() if item[f] else None
        memories.append(item)
    export_history.history_export(user_id=user_id,
                                  items={m["memory_id"]: m for m in memories})
    proposals = Conflict.objects.order_by("created_at", "id")
    if user_id is not None:
        proposals = proposals.filter(user_id=user_id)
    conflicts = []
    for c in proposals.iterator(chunk_size=2000):
        row = {f: getattr(c, f) for f in CONFLICT_FIELDS if f not in ("newer", "older")}
        row.update(newer=c.newer_id, older=c.older_id)
        for f in ("created_at", "decided_at"):
            row[f] = row[f].isoformat() if row[f] else None
        conflicts.append(row)
    return {"schema_version": SCHEMA_VERSION, "exported_at": timezone.now().isoformat(),
            "user_id": user_id, "memories": memories, "conflicts": conflicts,
            "sessions": export_extras.sessions_export(user_id=user_id),
            "lab": export_extras.lab_export(user_id=user_id),
            "feedback": export_extras.feedback_export(user_id=user_id)}


def _naming_item(exc: ServiceError, n: int) -> ServiceError:
    """The writer's error about item ``n``, its message prefixed ``memories[n].``."""
    exc.message = f"memories[{n}].{exc.message}"
    exc.args = (exc.message,)
    exc.extra["index"] = n
    return exc


def _build_fields(m: dict, n: int, *, importance_default=None) -> dict:
    return {"user_id": m.get("user_id"), "content": m.get("content"),
            "conversation_id": m.get("conversation_id"), "type": m.get("type", "long_term"),
            "importance": m.get("importance", importance_default), "tags": m.get("tags") or [],
            "metadata": m.get("metadata") or {}, "source": m.get("source") or "",
            "author": m.get("author") or "", "keywords": m.get("keywords") or [],
            "agent_id": m.get("agent_id"), "run_id": m.get("run_id"),
            "created_at": item_date(m, n, "created_at"),
            "valid_from": item_date(m, n, "valid_from"),
            "valid_until": item_date(m, n, "valid_until"), **_context_fields(m, n)}


def _context_fields(m: dict, n: int) -> dict:
    """``context`` and ``context_from`` for the writer: absent or null context = built by the
    server from the conversation (memories.services.context); a given one is kept, with the
    item's ``context_from`` when it names a known source (``conversation``: rebuilt from the
    neighbours it lands among)."""
    context = m.get("context")
    if context is None:
        return {"context": None}
    source = m.get("context_from") or None
    if source is not None and source not in CONTEXT_SOURCES:
        raise item_error(n, "context_from", f"must be one of {', '.join(CONTEXT_SOURCES)}")
    if not context and source != CONVERSATION:
        source = ""
    return {"context": context, "context_from": source}


@transaction.atomic
def import_memories(*, doc, mode: str = "merge", actor=None) -> dict:
    """Import an export document; ``mode`` is ``merge`` or ``replace``. Returns counts.

    ``replace`` deletes every memory (and its history) of the document's namespaces first
    (its ``user_id``, else its memories'), then restores the document's memories with their
    ids, versions (history), access counts and states, and swaps the namespaces' sessions
    and lab objects for those of a schema-4 or later document (and their recall feedback
    for a schema-5 one's: ``feedback_skipped`` counts the items whose memory it lacks); a document naming a namespace without
    memories empties it. ``merge`` creates the document's live memories through the bulk writer.
    All or nothing: a bad item raises InvalidInput (TooLarge for an over-long content)
    naming it (``memories[n]…``, ``index`` n) and nothing changes.
    """
    if mode not in ("merge", "replace"):
        raise InvalidInput("mode must be merge or replace", field="mode")
    doc = resolve_times(doc, now=timezone.now())
    items = document_items(doc)
    proposals = document_conflicts(doc)
    result = _merge(items, actor) if mode == "merge" else _replace(doc, items, proposals, actor)
    services.audit_record(actor=actor, action="import", target=doc.get("user_id") or "*",
                          reason=mode, data=result)
    return result


def _merge(items: list[dict], actor) -> dict:
    for n, m in enumerate(items):  # fields a merge does not write are checked all the same
        _deleted_by(m, n)
        for field in DATES:
            item_date(m, n, field)
    wanted = [(n, m) for n, m in enumerate(items) if not m.get("deleted_at")]
    fields = []
    for n, m in wanted:
        fields.append(_build_fields(m, n))
    try:
        created = services.memory_create_many(items=fields, actor=actor, reason="import")
    except ServiceError as exc:
        index = exc.extra.get("index")
        if index is None:
            raise
        raise _naming_item(exc, wanted[index][0]) from None
    new = sum(1 for _, dup in created if not dup)
    return {"created": new, "deduplicated": len(created) - new}


def _whole(value, field: str, n: int, *, minimum: int, default: int) -> int:
    """A whole number >= ``minimum`` from a document item (None = ``default``)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value < 2**31:
        raise item_error(n, field, f"must be a whole number >= {minimum}")
    return value


def _restored(m: dict, n: int) -> Memory:
    """One document item as an unsaved Memory with its id, version and state."""
    fields = _build_fields(m, n, importance_default=0.5)  # its errors name the item already
    try:
        built = build_memory(**fields)
    except ServiceError as exc:
        raise _naming_item(exc, n) from None
    memory_id = m.get("memory_id")
    if memory_id is not None and not (isinstance(memory_id, str)
                                      and MEMORY_ID_RE.match(memory_id)):
        raise item_error(n, "memory_id", "must look like mem_ and 16 hex digits")
    built.memory_id = memory_id or built.memory_id
    versions = m.get("history") if isinstance(m.get("history"), list) else []
    last = versions[-1].get("version") if versions and isinstance(versions[-1], dict) else 1
    built.version = _whole(m.get("version"), "version", n, minimum=1,
                           default=last if isinstance(last, int) else 1)
    built.access_count = _whole(m.get("access_count"), "access_count", n, minimum=0, default=0)
    built.accessed_at = item_date(m, n, "accessed_at")
    built.updated_at = item_date(m, n, "updated_at") or built.updated_at
    if "expire_at" in m:  # absent: the default TTL of a short-term memory
        built.expire_at = item_date(m, n, "expire_at")
    built.deleted_at = item_date(m, n, "deleted_at")
    built.deleted_by = _deleted_by(m, n)
    superseded_by = m.get("superseded_by")
    if superseded_by is not None and not (isinstance(superseded_by, str)
                                          and MEMORY_ID_RE.match(superseded_by)):
        raise item_error(n, "superseded_by", "must be a memory id or null")
    built.superseded_by = superseded_by
    return built


def _deleted_by(m: dict, n: int) -> str:
    deleted_by = m.get("deleted_by") or ""
    if not isinstance(deleted_by, str) or len(deleted_by) > 150:
        raise item_error(n, "deleted_by", "must be a string of at most 150 characters")
    try:
        return clean_text(deleted_by, "deleted_by", kind=LINE)
    except ServiceError as exc:
        raise _naming_item(exc, n) from None


def _history(m: dict, n: int, built: Memory) -> list:
    """The document's versions of ``built`` (item ``n``) as unsaved rows of its history."""
    versions = export_history.version_items(m, n)
    export_history.check_versions(versions, n, current=built.version)
    rows = []
    for k, version in enumerate(versions):
        fields = {**m, **version["fields"], "version": version["version"],
                  "memory_id": built.memory_id, "history": None}
        rows.append(export_history.history_row(_restored(fields, n), version, first=k == 0))
    return rows


def _replace(doc: dict, items: list[dict], proposals: list[dict], actor) -> dict:
    namespaces = document_namespaces(doc, items)
    extras = {"sessions": None, "lab": None, "feedback": None}
    if doc.get("schema_version") >= 4:
        extras = {"sessions": export_extras.document_sessions(doc, namespaces),
                  "lab": export_extras.document_lab(doc, namespaces),
                  "feedback": (export_extras.document_feedback(doc, namespaces)
                               if doc["schema_version"] >= SCHEMA_VERSION else None)}
    restored, first_at, live_keys, deduplicated, history = [], {}, set(), 0, {}
    for n, m in enumerate(items):
        built = _restored(m, n)
        versions = _history(m, n, built)
        if built.memory_id in first_at:
            raise item_error(n, "memory_id", f"{built.memory_id} is also "
                             f"memories[{first_at[built.memory_id]}]: ids are unique")
        first_at[built.memory_id] = n
        if built.deleted_at is None:
            # One live memory per content hash, user, conversation and type (the first in
            # the document, i.e. the oldest in an export); a forgotten copy may stay.
            key = (built.user_id, built.conversation_id, built.type, built.content_hash)
            if key in live_keys:
                deduplicated += 1
                continue
            live_keys.add(key)
        restored.append(built)
        if versions:
            history[built.memory_id] = versions
    taken = (Memory.objects.filter(memory_id__in=list(first_at))
             .exclude(user_id__in=namespaces).values_list("memory_id", flat=True)[:1])
    for memory_id in taken:
        # Ids are unique across namespaces; which one holds it is not said (a token
        # restricted to some namespaces learns nothing of the others).
        raise item_error(first_at[memory_id], "memory_id",
                         f"{memory_id} is not available: leave memory_id out for a new id")
    # The replaced memories are purged (their history, their webhook payloads, the
    # namespaces' serving index snapshots: the purge's one path).
    old = list(Memory.objects.select_for_update().filter(user_id__in=namespaces)
               .values_list("memory_id", flat=True))
    removed = len(old)
    services.memories_erase(memory_ids=old, user_ids=namespaces, actor=actor, reason="import")
    # Server-built contexts from the restored neighbours (the same text an export held,
    # unless a neighbour was missing from it); a client's or copied context is kept.
    batch_contexts([m for m in restored if m.deleted_at is None])
    # A memory the document gives versions keeps them; any other gets one ``restore``.
    services.memories_insert_restored(memories=restored, versions=history, actor=actor)
    # Their slots, so later writes find them (no proposals: the document's are restored).
    conflict_service.propose(restored, mode="off")
    conflicts = conflict_service.conflicts_restore(proposals)
    written = export_extras.extras_restore(namespaces=namespaces, **extras)
    from operations import reindex

    def rebuild():
        for user_id in namespaces:
            try:
                # The document's access counts are the truth now, not hits Redis still holds.
                access.access_discard(user_id=user_id)
                reindex.reindex_namespace(user_id, forget_versions=True)
            except store.RedisError as exc:
                # After the commit: the import stands (an error answer would have the client
                # send it again); its rows are flagged for the reconcile, as any write's.
                log.warning("namespace %s not reindexed after its import: %s", user_id,
                            type(exc).__name__)
                services.memories_mark_resync(user_id=user_id)

    transaction.on_commit(rebuild)
    return {"replaced_namespaces": len(namespaces), "removed": removed,
            "restored": len(restored), "deduplicated": deduplicated, "conflicts": conflicts,
            **written}
