"""What Redis holds of one memory, read as the serving index and recall take it: its index
record as one field's ``engine.Doc`` (or a format-6 field vector, during an upgrade), and
its hot-store hash with the fields a write leaves out when empty read as "".
"""

from __future__ import annotations

import math

from memories import store
from search.index import fields as index_fields
from search.serving.engine import Builder, Doc


def doc_of(memory_id: str, raw, field_name: str) -> Doc | None:
    """The ``engine.Doc`` of field ``field_name`` of a memory, from what Redis holds of it:
    its index record (a string, ``search.index.fields.record_text``), or the field's
    document vector of a format-6 index (a hash: a dict or a flat list, as HGETALL returns
    it). None when the memory has no document in that field."""
    if isinstance(raw, (str, bytes)):
        record = index_fields.record_read(store.text(raw))
        terms, tfs, dl = index_fields.record_postings(record, field_name)
        if not terms:
            return None
        return Doc(memory_id, dl, dict(zip(terms, map(int, tfs), strict=True)),
                   *_filters(record.meta.get))
    items = raw.items() if isinstance(raw, dict) else zip(raw[::2], raw[1::2], strict=True)
    pairs = {store.text(k): store.text(v) for k, v in items}
    tf = {k: int(v) for k, v in pairs.items() if k[0] != "#"}
    if "#dl" not in pairs or not tf:
        return None
    return Doc(memory_id, int(pairs["#dl"]), tf, *_filters(pairs.get, "#"))


def _filters(get, mark: str = "") -> tuple[str, str, float, float, float]:
    """``(type, conv, exp, vf, vu)`` of a document, in ``engine.Doc``'s order, from ``get``
    (a record's meta, or with ``mark="#"`` a format-6 vector): expiry and validity in epoch
    seconds, ``0.0`` for no expiry, -inf / +inf for an unbounded validity (a document
    written before validity, or a fact that has not ended)."""
    vf, vu = get(mark + "vf"), get(mark + "vu")
    return (get(mark + "type", ""), get(mark + "conv", ""), float(get(mark + "exp") or 0.0),
            float(vf) if vf else -math.inf, float(vu) if vu else math.inf)


def add_record(builder: Builder, memory_id: str, raw, field_name: str) -> None:
    """One record into a build: its field's terms as lists (made in C), no ``Doc``."""
    record = index_fields.record_read(store.text(raw))
    terms, tfs, dl = index_fields.record_postings(record, field_name)
    if terms:
        type_, conv, exp, vf, vu = _filters(record.meta.get)
        builder.add(memory_id, dl, type_, conv, exp, terms, tfs, vf, vu)


# The hot-store hash fields a write leaves out when empty (memories.mirror): read back as "".
EMPTY_WHEN_ABSENT = ("conversation_id", "author", "agent_id", "run_id", "accessed_at",
                     "expire_at", "valid_until", "superseded_by")


def hash_of(raw) -> dict[str, str]:
    """A whole hot-store hash as text (HGETALL's reply, a dict or a flat list), the fields
    a write leaves out when empty read as "" ({} for a hash that is gone)."""
    if isinstance(raw, dict):
        pairs = raw.items()
    elif raw and isinstance(raw[0], str):  # a decoding client: already text
        pairs = zip(raw[::2], raw[1::2], strict=True)
    else:
        pairs = zip(raw[::2], raw[1::2], strict=True)
    out = {store.text(k): store.text(v) for k, v in pairs}
    if out:
        for name in EMPTY_WHEN_ABSENT:
            out.setdefault(name, "")
    return out
