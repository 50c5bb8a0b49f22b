"""Reads never serve a state the database has left.

When a write's Redis mirror fails (Redis down, paused or full), the database holds the new
state with ``needs_resync`` set, and the index still holds the old one until a reconcile
repairs it: a forgotten memory's postings, a changed importance. So before hits become
results, their hot-store documents are checked against the database: one primary-key
query per recall for the page of candidates (a second, for their full rows, only when some
are pending). A candidate whose row is gone (purged) or pending and no longer live
(forgotten, expired) is dropped; a pending live one is served from its row (content,
importance, version, ...), so what a profile weighs is the truth. BM25 itself is left as the
index computed it: the text that matched is the text that was indexed.
"""

from django.db import connection
from django.utils import timezone

from memories.models import Memory
from search.serving.documents import hash_of


def row_flags(memory_ids: list[str]) -> dict[str, bool]:
    """``{memory_id: needs_resync}`` of the rows that exist: one primary-key query in plain
    SQL (the ORM's query building cost more than the query itself, on every recall)."""
    if not memory_ids:
        return {}
    table = connection.ops.quote_name(Memory._meta.db_table)
    key = connection.ops.quote_name(Memory._meta.get_field("memory_id").column)
    flag = connection.ops.quote_name(Memory._meta.get_field("needs_resync").column)
    marks = ", ".join(["%s"] * len(memory_ids))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {key}, {flag} FROM {table} WHERE {key} IN ({marks})",
                       memory_ids)
        return {memory_id: bool(value) for memory_id, value in cursor.fetchall()}


def docs_verified(docs: dict[str, dict[str, str]],
                  flags: dict[str, bool] | None = None) -> dict[str, dict[str, str]]:
    """``docs`` (memory_id -> hot-store hash, string values as ``mirror_args`` writes them)
    with rows the database no longer holds dropped and pending rows replaced by the
    database's state (or dropped when it is not live). Raises nothing of Redis.
    ``flags``: ``{memory_id: needs_resync}`` of the rows that exist, when the caller read
    them already (:func:`row_flags`, or a rescoring window's read with its embeddings:
    search.rescoring), for these ids and maybe others."""
    if not docs:
        return docs
    if flags is None:
        flags = row_flags(list(docs))
    pending = [memory_id for memory_id, flag in flags.items() if flag and memory_id in docs]
    out = {memory_id: doc for memory_id, doc in docs.items()
           if memory_id in flags and not flags[memory_id]}
    if pending:
        from memories.mirror import mirror_args

        now = timezone.now()
        for memory in Memory.objects.filter(memory_id__in=pending):
            fields = hash_of(mirror_args(memory, now)["hash_fields"])
            if fields:  # empty: forgotten or expired
                # Hits counted in Redis since stay with the served document.
                held = docs[memory.memory_id]
                fields["access_count"] = max(fields["access_count"],
                                             held.get("access_count") or "0", key=int)
                out[memory.memory_id] = fields
    return out
