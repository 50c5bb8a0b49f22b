"""The version history of memories in an export document (schema 4).

Each memory item may hold ``history``: its versions oldest first, each ``{"version", "at",
"kind", "actor", "reason"}`` plus the memory fields in which that version differs from the
memory as exported (``content``, ``tags``, ``deleted_at``…; a field left out is the
memory's own). The last version is the memory's ``version``. A replace import writes these
versions as the memory's history instead of the one ``restore`` version a memory without
``history`` gets; a merge import creates new memories and keeps none.
"""

from memories.models import ChangeKind, Memory
from operations.import_document import item_date, item_error

# The memory fields a version records (simple-history's columns, ids and the version aside).
HISTORY_FIELDS = ("conversation_id", "type", "content", "context", "context_from", "keywords",
                  "tags", "importance", "created_at", "updated_at", "expire_at", "source",
                  "author", "metadata", "deleted_at", "deleted_by", "valid_from", "valid_until",
                  "superseded_by", "agent_id", "run_id")
VERSION_KEYS = ("version", "at", "kind", "actor", "reason")
_DATES = ("created_at", "updated_at", "expire_at", "deleted_at", "valid_from", "valid_until")


def _value(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def history_export(*, user_id: str | None, items: dict[str, dict]) -> None:
    """Add ``history`` to each exported memory of ``items`` (memory id -> exported item),
    read from simple-history's table (one query, in chunks)."""
    rows = Memory.history.model.objects.order_by("memory_id", "version", "history_id")
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    for h in rows.iterator(chunk_size=2000):
        item = items.get(h.memory_id)
        if item is None:
            continue
        version = {"version": h.version, "at": h.history_date.isoformat(), "kind": h.kind,
                   "actor": h.changed_by, "reason": h.history_change_reason or ""}
        for field in HISTORY_FIELDS:
            value = _value(getattr(h, field))
            if value != item.get(field):
                version[field] = value
        item.setdefault("history", []).append(version)


def version_items(m: dict, n: int) -> list[dict]:
    """The versions of document item ``n`` (``m``), shape-checked: ``[{"version", "at"
    (aware datetime), "kind", "actor", "reason", "fields": {field: value}}]`` oldest first
    (empty when it has none). Raises InvalidInput naming ``memories[n].history[k]``."""
    versions = m.get("history")
    if versions is None:
        return []
    if not isinstance(versions, list) or not versions:
        raise item_error(n, "history", "must be a non-empty list of versions")
    out, last = [], 0
    for k, v in enumerate(versions):
        where = f"history[{k}]"
        if not isinstance(v, dict):
            raise item_error(n, where, "must be an object holding one version")
        unknown = sorted(set(v) - set(VERSION_KEYS) - set(HISTORY_FIELDS))
        if unknown:
            raise item_error(n, f"{where}.{unknown[0]}", "is not a field of a version")
        number = v.get("version")
        if isinstance(number, bool) or not isinstance(number, int) or number <= last:
            raise item_error(n, f"{where}.version", "must be a whole number above the "
                             "version before it")
        last = number
        if v.get("kind") not in ChangeKind.values:
            raise item_error(n, f"{where}.kind", f"must be one of {', '.join(ChangeKind.values)}")
        for key, limit in (("actor", 150), ("reason", 100)):
            if not isinstance(v.get(key, ""), str) or len(v.get(key, "")) > limit:
                raise item_error(n, f"{where}.{key}", f"must be a string of at most {limit} "
                                 "characters")
        at = item_date({"at": v.get("at")}, n, "at")
        if at is None:
            raise item_error(n, f"{where}.at", "is required")
        for field in _DATES:  # checked here to name the version; built again by the caller
            item_date({field: v.get(field)}, n, field)
        fields = {f: v[f] for f in HISTORY_FIELDS if f in v}
        out.append({"version": number, "at": at, "kind": v["kind"],
                    "actor": v.get("actor") or "system", "reason": v.get("reason") or "",
                    "fields": fields})
    return out


def history_row(snapshot: Memory, version: dict, *, first: bool):
    """One unsaved row of simple-history's table: ``snapshot`` (a built Memory holding the
    version's fields) stamped with the version's number, moment, kind, actor and reason."""
    model = Memory.history.model
    return model(
        history_date=version["at"], history_change_reason=version["reason"],
        history_type="+" if first else "~", history_user=None, kind=version["kind"],
        changed_by=version["actor"],
        **{f.attname: getattr(snapshot, f.attname) for f in model.tracked_fields},
    )


def check_versions(versions: list[dict], n: int, *, current: int) -> None:
    """The newest version must be the memory's own ``current``. Raises InvalidInput."""
    if versions and versions[-1]["version"] != current:
        raise item_error(n, "history", f"must end with the memory's version {current}")

