"""Lean windows of a recall: a window ranked by BM25 and meaning alone (no filter, time,
recency or importance) needs no memory hashes to rank, and one ranked by those needs only a
few fields of each (``search.serving.partial``), so the results' whole hashes are read from
the hot store once ranked, in one bounded ``feed.lua`` call (``search.serving.answer.rows``).
"""

import json
import logging
import time

from memories import access
from search import scoring
from search.serving import answer as serving
from search.serving.partial import UNREAD, is_partial

log = logging.getLogger(__name__)


def fill_results(result, ranked, docs, *, client, user_id, field_name, limit, now, prof,
                 count_hits, position=None) -> None:
    """The best ``limit`` of ``ranked`` (a window read in part, best first) with their
    whole hot-store hashes, in one ``feed.lua`` call (bounded: ``limit`` hashes), which also
    counts their recall hits when ``count_hits`` and every row is ``UNREAD``.

    A row that is not as it was ranked gives its place to the next, as a row Redis no longer
    holds (forgotten since the search) does: one ranked on some of its fields whose version
    changed since, and an ``UNREAD`` one written after ``position`` (where the write stream
    stood when the window was ranked: ``Found.position``; when the stream cannot tell, see
    ``answer.written_between``, the rows are served, as before there was this check, and
    a warning logged). Either was written between the reads:
    its score, filters and explanation are of the version ranked. An ``UNREAD`` row dropped so
    was counted by the call and is taken back; a row read in part would be counted by the
    call that finds it, so those windows' hits are counted by the caller."""
    count = count_hits and all(docs[h.memory_id] is UNREAD for h in ranked)
    out, pos = [], 0
    while len(out) < limit and pos < len(ranked):
        batch = ranked[pos:pos + limit - len(out)]
        pos += len(batch)
        unread = [h.memory_id for h in batch if is_partial(docs[h.memory_id])]
        got = serving.rows(client, user_id=user_id, field_name=field_name, memory_ids=unread,
                           hit_time=time.time() if count else None)
        written = set()
        if position is not None and any(docs[m] is UNREAD for m in unread):
            written = serving.written_between(client, user_id, position, got.position,
                                              field_name)
            if written is None:
                log.warning("recall of %s: writes between the window's reads untold (%s, %s)",
                            user_id, position, got.position)
                written = set()
        dropped = []
        for h in batch:
            doc = docs[h.memory_id]
            if is_partial(doc):
                ranked_as = doc
                doc = got.hashes.get(h.memory_id)
                if doc is None:
                    continue
                if ranked_as is UNREAD and h.memory_id in written:
                    dropped.append(h.memory_id)
                    continue
                if ranked_as is not UNREAD and doc["version"] != ranked_as["version"]:
                    continue
                docs[h.memory_id] = doc
                stamp = doc.get("accessed_at") if prof.recency_from == "accessed_at" else ""
                h.created_at = float(doc["created_at"])
                h.importance = h.explain.importance = float(doc["importance"])
                h.explain.recency = scoring.recency(now - float(stamp or doc["created_at"]),
                                                    prof.half_life_hours)
                h.content, h.type, h.version = doc["content"], doc["type"], int(doc["version"])
                h.metadata = json.loads(doc["metadata"])
                h.conversation_id = doc["conversation_id"] or None
                h.take_validity(doc)
                h.take_scope(doc)
            out.append(h)
        if got.counted:
            access.access_counted(user_id=user_id, unlisted=got.unlisted, dropped=dropped)
    result.results = out
    result.hits_counted = count
