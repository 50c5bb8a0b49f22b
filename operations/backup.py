"""Backup and restore of memories as versioned JSON.

Schema 2 (current): ``{"schema_version": 2, "exported_at", "user_id" | null, "memories":
[{memory fields…}]}``, every memory with its id, version and soft-delete state. Schema 1
(before context and keywords were exported) is migrated on import. A ``replace`` import
swaps a namespace's memories for the document's in one transaction and reindexes it after
commit, so recall never sees old and new mixed; ``merge`` adds what is new (deduplicated).
"""


from django.db import transaction
from django.utils import timezone

from memories import access, services
from memories.errors import InvalidInput
from memories.history import actor_name
from memories.models import Memory
from memories.services.create import build_memory
from memories.validation import MEMORY_ID_RE, parse_iso_datetime

SCHEMA_VERSION = 2
FIELDS = ("memory_id", "user_id", "conversation_id", "type", "content", "context", "keywords",
          "tags", "importance", "access_count", "created_at", "updated_at", "expire_at",
          "source", "author", "metadata", "version", "deleted_at", "deleted_by")
_DATES = ("created_at", "updated_at", "expire_at", "deleted_at")


def export_memories(*, user_id: str | None = None) -> dict:
    """One namespace (or every one) as a schema-2 document, pending recall hits folded in
    first (``memories.access``)."""
    access.access_fold_quietly(user_ids=None if user_id is None else [user_id])
    rows = Memory.objects.order_by("user_id", "created_at", "memory_id")
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    memories = []
    for m in rows.iterator(chunk_size=2000):
        item = {f: getattr(m, f) for f in FIELDS}
        for f in _DATES:
            item[f] = item[f].isoformat() if item[f] else None
        memories.append(item)
    return {"schema_version": SCHEMA_VERSION, "exported_at": timezone.now().isoformat(),
            "user_id": user_id, "memories": memories}


def migrate_document(doc) -> dict:
    """Bring an export to the current schema; raises InvalidInput for anything else."""
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        raise InvalidInput("an export document has a memories list", field="memories")
    version = doc.get("schema_version")
    if version == 1:
        doc = {**doc, "schema_version": 2, "memories": [
            {**m, "context": "", "keywords": m.get("keywords", [])} for m in doc["memories"]]}
    elif version != SCHEMA_VERSION:
        raise InvalidInput(f"schema_version must be 1 or {SCHEMA_VERSION}", field="schema_version")
    return doc


def _parse(value, field):
    return None if value in (None, "") else parse_iso_datetime(value, field)


@transaction.atomic
def import_memories(*, doc, mode: str = "merge", actor=None) -> dict:
    """Import an export document; ``mode`` is ``merge`` or ``replace``. Returns counts.

    ``replace`` deletes every memory (and its history) of each namespace in the document
    first, then restores the document's memories with their ids, versions and states.
    ``merge`` creates the document's live memories through the bulk service (dedup).
    All or nothing: a bad item raises InvalidInput and nothing changes.
    """
    if mode not in ("merge", "replace"):
        raise InvalidInput("mode must be merge or replace", field="mode")
    doc = migrate_document(doc)
    items = doc["memories"]
    if mode == "merge":
        created = services.memory_create_many(items=[
            {k: v for k, v in {
                "user_id": m.get("user_id"), "content": m.get("content"),
                "conversation_id": m.get("conversation_id"), "type": m.get("type", "long_term"),
                "importance": m.get("importance"), "tags": m.get("tags") or [],
                "metadata": m.get("metadata") or {}, "source": m.get("source") or "",
                "author": m.get("author") or "", "keywords": m.get("keywords") or [],
                "context": m.get("context") or "",
                "created_at": _parse(m.get("created_at"), "created_at"),
            }.items()} for m in items if not m.get("deleted_at")], actor=actor, reason="import")
        new = sum(1 for _, dup in created if not dup)
        result = {"created": new, "deduplicated": len(created) - new}
    else:
        result = _replace(items, actor)
    services.audit_record(actor=actor, action="import", target=doc.get("user_id") or "*",
                          reason=mode, data=result)
    return result


def _whole(value, field: str, n: int, *, minimum: int, default: int) -> int:
    """A whole number >= ``minimum`` from a document item (None = ``default``)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value < 2**31:
        raise InvalidInput(f"memories[{n}].{field} must be a whole number >= {minimum}",
                           field=field, index=n)
    return value


def _replace(items: list[dict], actor) -> dict:
    namespaces = sorted({m.get("user_id") for m in items} - {None})
    restored = []
    for n, m in enumerate(items):
        built = build_memory(
            user_id=m.get("user_id"), content=m.get("content"),
            conversation_id=m.get("conversation_id"), type=m.get("type", "long_term"),
            importance=m.get("importance", 0.5), tags=m.get("tags") or [],
            metadata=m.get("metadata") or {}, source=m.get("source") or "",
            author=m.get("author") or "", keywords=m.get("keywords") or [],
            context=m.get("context") or "", created_at=_parse(m.get("created_at"), "created_at"))
        memory_id = m.get("memory_id")
        if memory_id is not None and not (isinstance(memory_id, str)
                                          and MEMORY_ID_RE.match(memory_id)):
            raise InvalidInput(f"memories[{n}].memory_id must look like mem_ and 16 hex digits",
                               field="memory_id", index=n)
        built.memory_id = memory_id or built.memory_id
        built.version = _whole(m.get("version"), "version", n, minimum=1, default=1)
        built.access_count = _whole(m.get("access_count"), "access_count", n, minimum=0,
                                    default=0)
        built.updated_at = _parse(m.get("updated_at"), "updated_at") or built.updated_at
        built.expire_at = _parse(m.get("expire_at"), "expire_at")
        built.deleted_at = _parse(m.get("deleted_at"), "deleted_at")
        built.deleted_by = m.get("deleted_by") or ""
        restored.append(built)
    old = Memory.objects.filter(user_id__in=namespaces)
    removed = old.count()
    # The replaced memories are hard-deleted: their content leaves the webhook outbox too.
    from integrations.webhooks.outbox import outbox_purge_memories

    outbox_purge_memories(memory_ids=old.values_list("memory_id", flat=True))
    Memory.history.filter(user_id__in=namespaces).delete()
    old.delete()
    Memory.history.filter(user_id__in=namespaces).delete()  # the "-" rows delete() added
    from simple_history.utils import bulk_create_with_history

    from memories.models import ChangeKind
    bulk_create_with_history(restored, Memory, batch_size=500, default_change_reason="restore",
                             custom_historical_attrs={"kind": ChangeKind.RESTORE,
                                                      "changed_by": actor_name(actor)})
    from operations import reindex

    def rebuild():
        for user_id in namespaces:
            # The document's access counts are the truth now, not hits Redis still holds.
            access.access_discard(user_id=user_id)
            reindex.reindex_namespace(user_id, forget_versions=True)

    transaction.on_commit(rebuild)
    return {"replaced_namespaces": len(namespaces), "removed": removed,
            "restored": len(restored)}
