"""The shape of an export document, checked before an import writes anything.

Schema 5 (current): schema 4 with ``"feedback": [{feedback}]``, the recall feedback of the
exported namespaces (``operations.export_extras``). Schema 4: ``{"schema_version": 4,
"exported_at", "user_id" | null, "memories": [{memory fields…, "history": [{version}]}],
"conflicts": [{conflict fields…}], "sessions": [{session}], "lab": {…}}``: schema 3 with each memory's versions
(``operations.export_history``), the sessions and the ranking-lab objects
(``operations.export_extras``). Schema 3 added each memory's validity (``valid_from``,
``valid_until``, ``superseded_by``) and the review queue's proposals and decisions. Schema 2
(before validity: its memories hold from their creation, none superseded) and schema 1
(before ``context`` and ``keywords`` were exported) are brought to schema 3 first; a
document before schema 4 holds no history, sessions nor lab objects, one before schema 5
no feedback (a replace import of one leaves the namespaces' feedback as it is). A document with
``"times": "relative"`` holds offsets from the import instead of dates
(``operations.relative_times``). Every item error is an InvalidInput naming the item
(``memories[3].created_at``, ``index`` 3) so the caller can answer a 400 that says which one
to fix; the values themselves are checked by the memory writers' own validation.
"""

from memories.errors import InvalidInput
from memories.validation import parse_iso_datetime

SCHEMA_VERSION = 5
SCHEMA_VERSIONS = (1, 2, 3, 4, 5)
# Every field of a memory an export holds; ``content_hash`` is accepted and recomputed.
# ``context_from`` (who built ``context``: client, conversation, session, copy) came later
# within schema 2: an item without it keeps its context as the client's. An item without
# ``context`` (or with null) in a conversation gets a server-built one, as a create does.
FIELDS = ("memory_id", "user_id", "conversation_id", "type", "content", "context",
          "context_from", "keywords",
          "tags", "importance", "access_count", "accessed_at", "created_at", "updated_at",
          "expire_at", "source", "author", "metadata", "version", "deleted_at", "deleted_by",
          "valid_from", "valid_until", "superseded_by", "agent_id", "run_id")
DATES = ("accessed_at", "created_at", "updated_at", "expire_at", "deleted_at", "valid_from",
         "valid_until")
# Every field of a proposal an export holds (``newer`` and ``older`` are memory ids).
CONFLICT_FIELDS = ("newer", "older", "confidence", "reason", "evidence", "status",
                   "created_at", "decided_at", "decided_by", "decision_reason")
_ACCEPTED = frozenset(FIELDS) | {"content_hash", "history"}


def item_error(n: int, field: str | None, message: str) -> InvalidInput:
    where = f"memories[{n}].{field}" if field else f"memories[{n}]"
    return InvalidInput(f"{where} {message}", field=field or "memories", index=n)


def document_items(doc) -> list[dict]:
    """The memories of an export document, each a dict with known fields only.

    Raises InvalidInput: for a document that is not one (``field`` memories or
    schema_version), and for an item that is not an object or holds an unknown field
    (naming the item).
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        raise InvalidInput("an export document is an object with a memories list",
                           field="memories")
    version = doc.get("schema_version")
    if isinstance(version, bool) or version not in SCHEMA_VERSIONS:
        raise InvalidInput(f"schema_version must be one of {', '.join(map(str, SCHEMA_VERSIONS))}",
                           field="schema_version")
    accepted = _ACCEPTED if version >= 4 else _ACCEPTED - {"history"}
    items = []
    for n, item in enumerate(doc["memories"]):
        if not isinstance(item, dict):
            raise item_error(n, None, "must be an object holding one memory")
        unknown = sorted(set(item) - accepted)
        if unknown:
            raise item_error(n, unknown[0], "is not a memory field")
        if version == 1:
            item = {"context": "", "keywords": [], **item}
        items.append(item)
    return items


def item_date(item: dict, n: int, field: str):
    """An aware datetime from ``item[field]`` (None when absent or null)."""
    value = item.get(field)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise item_error(n, field, "must be an ISO 8601 date and time")
    try:
        return parse_iso_datetime(value, field)
    except InvalidInput as exc:
        raise item_error(n, field, exc.message.removeprefix(field).strip()) from None


def document_namespaces(doc: dict, items: list[dict]) -> list[str]:
    """The namespaces a replace import swaps: the document's ``user_id`` when it names one
    (every item must then belong to it, and a document without memories empties it), else
    every item's. Raises InvalidInput when there is none, or for an item of another one."""
    named = doc.get("user_id")
    if named is not None:
        if not isinstance(named, str) or not named:
            raise InvalidInput("user_id must name the document's namespace", field="user_id")
        for n, item in enumerate(items):
            if item.get("user_id") != named:
                raise item_error(n, "user_id", f"must be {named!r}, the document's namespace")
        return [named]
    for n, item in enumerate(items):
        if not isinstance(item.get("user_id"), str):
            raise item_error(n, "user_id", "is required")
    namespaces = {item["user_id"] for item in items}
    if not namespaces:
        raise InvalidInput("a replace import needs the namespace it replaces: the document "
                           "has no user_id and no memories", field="user_id")
    return sorted(namespaces)


def document_conflicts(doc: dict) -> list[dict]:
    """The proposals of a document of schema 3 or later (none before), each checked for shape only:
    an object with known fields, ``newer`` and ``older`` strings, a status the queue knows.
    Raises InvalidInput naming ``conflicts[n]``."""
    rows = doc.get("conflicts") if doc.get("schema_version") in SCHEMA_VERSIONS[2:] else None
    if rows is None:
        return []
    if not isinstance(rows, list):
        raise InvalidInput("conflicts must be a list", field="conflicts")
    out = []
    for n, row in enumerate(rows):
        where = f"conflicts[{n}]"
        if not isinstance(row, dict) or set(row) - set(CONFLICT_FIELDS):
            raise InvalidInput(f"{where} must be an object with conflict fields only",
                               field="conflicts", index=n)
        if not all(isinstance(row.get(k), str) for k in ("newer", "older")):
            raise InvalidInput(f"{where} needs newer and older memory ids", field="conflicts",
                               index=n)
        if row.get("status", "open") not in ("open", "accepted", "rejected"):
            raise InvalidInput(f"{where}.status must be open, accepted or rejected",
                               field="conflicts", index=n)
        confidence = row.get("confidence", 0.5)
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) \
                or not 0 <= confidence <= 1:
            raise InvalidInput(f"{where}.confidence must be 0..1", field="conflicts", index=n)
        dates = {}
        for field in ("created_at", "decided_at"):
            value = row.get(field)
            if value not in (None, ""):
                try:
                    dates[field] = parse_iso_datetime(value, field)
                except InvalidInput:
                    raise InvalidInput(f"{where}.{field} must be an ISO 8601 date and time",
                                       field="conflicts", index=n) from None
        out.append({**row, **dates, "confidence": float(confidence)})
    return out
