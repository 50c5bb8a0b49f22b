"""The shape of an export document, checked before an import writes anything.

Schema 2 (current): ``{"schema_version": 2, "exported_at", "user_id" | null, "memories":
[{memory fields…}]}``; schema 1 (before ``context`` and ``keywords`` were exported) is
brought to schema 2 first. Every item error is an InvalidInput naming the item
(``memories[3].created_at``, ``index`` 3) so the caller can answer a 400 that says which one
to fix; the values themselves are checked by the memory writers' own validation.
"""

from memories.errors import InvalidInput
from memories.validation import parse_iso_datetime

SCHEMA_VERSION = 2
# Every field of a memory an export holds; ``content_hash`` is accepted and recomputed.
# ``context_from`` (who built ``context``: client, conversation, session, copy) came later
# within schema 2: an item without it keeps its context as the client's. An item without
# ``context`` (or with null) in a conversation gets a server-built one, as a create does.
FIELDS = ("memory_id", "user_id", "conversation_id", "type", "content", "context",
          "context_from", "keywords",
          "tags", "importance", "access_count", "accessed_at", "created_at", "updated_at",
          "expire_at", "source", "author", "metadata", "version", "deleted_at", "deleted_by")
DATES = ("accessed_at", "created_at", "updated_at", "expire_at", "deleted_at")
_ACCEPTED = frozenset(FIELDS) | {"content_hash"}


def item_error(n: int, field: str | None, message: str) -> InvalidInput:
    where = f"memories[{n}].{field}" if field else f"memories[{n}]"
    return InvalidInput(f"{where} {message}", field=field or "memories", index=n)


def document_items(doc) -> list[dict]:
    """The memories of an export document at schema 2, each a dict with known fields only.

    Raises InvalidInput: for a document that is not one (``field`` memories or
    schema_version), and for an item that is not an object or holds an unknown field
    (naming the item).
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        raise InvalidInput("an export document is an object with a memories list",
                           field="memories")
    version = doc.get("schema_version")
    if isinstance(version, bool) or version not in (1, SCHEMA_VERSION):
        raise InvalidInput(f"schema_version must be 1 or {SCHEMA_VERSION}",
                           field="schema_version")
    items = []
    for n, item in enumerate(doc["memories"]):
        if not isinstance(item, dict):
            raise item_error(n, None, "must be an object holding one memory")
        unknown = sorted(set(item) - _ACCEPTED)
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
