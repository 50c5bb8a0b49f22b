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
        meta = record.meta
        return Doc(memory_id, dl, dict(zip(terms, map(int, tfs), strict=True)),
                   type=meta.get("type", ""), conv=meta.get("conv", ""),
                   exp=float(meta.get("exp") or 0.0), vf=_bound(meta.get("vf"), -math.inf),
                   vu=_bound(meta.get("vu"), math.inf))
    items = raw.items() if isinstance(raw, dict) else zip(raw[::2], raw[1::2], strict=True)
    pairs = {store.text(k): store.text(v) for k, v in items}
    tf = {k: int(v) for k, v in pairs.items() if k[0] != "#"}
    if "#dl" not in pairs or not tf:
        return None
    get = pairs.get
    return Doc(memory_id, int(pairs["#dl"]), tf, type=get("#type", ""), conv=get("#conv", ""),
               exp=float(get("#exp") or 0.0), vf=_bound(get("#vf"), -math.inf),
               vu=_bound(get("#vu"), math.inf))


def _bound(value: str | None, unbounded: float) -> float:
    """A validity bound of a document vector (epoch seconds); absent: ``unbounded`` (a
    document written before validity, or a fact that has not ended)."""
    return float(value) if value else unbounded


def add_record(builder: Builder, memory_id: str, raw, field_name: str) -> None:
    """One record into a build: its field's terms as lists (made in C), no ``Doc``."""
    record = index_fields.record_read(store.text(raw))
    terms, tfs, dl = index_fields.record_postings(record, field_name)
    if terms:
        meta = record.meta
        builder.add(memory_id, dl, meta.get("type", ""), meta.get("conv", ""),
                    float(meta.get("exp") or 0.0), terms, tfs, _bound(meta.get("vf"), -math.inf),
                    _bound(meta.get("vu"), math.inf))


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
