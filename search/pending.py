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

from django.utils import timezone

from memories.models import Memory


def docs_verified(docs: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """``docs`` (memory_id -> hot-store hash, string values as ``mirror_args`` writes them)
    with rows the database no longer holds dropped and pending rows replaced by the
    database's state (or dropped when it is not live). Raises nothing of Redis."""
    if not docs:
        return docs
    flags = dict(Memory.objects.filter(memory_id__in=list(docs))
                 .values_list("memory_id", "needs_resync"))
    pending = [memory_id for memory_id, flag in flags.items() if flag]
    out = {memory_id: doc for memory_id, doc in docs.items()
           if memory_id in flags and not flags[memory_id]}
    if pending:
        from memories.mirror import mirror_args

        now = timezone.now()
        for memory in Memory.objects.filter(memory_id__in=pending):
            fields = mirror_args(memory, now)["hash_fields"]
            if fields:  # empty: forgotten or expired
                # Hits counted in Redis since stay with the served document.
                held = docs[memory.memory_id]
                fields["access_count"] = max(fields["access_count"],
                                             held.get("access_count") or "0", key=int)
                out[memory.memory_id] = fields
    return out
