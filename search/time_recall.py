"""Time in a recall (``search.temporal``): a query that is only a time lists that range's
memories, and a range named with words joins the window as a term of its own."""

import json

from django.conf import settings

from search import temporal, time_rows
from search.pending import docs_verified
from search.recall_filters import RecallFilters, TimePlan, Validity
from search.results import Explain, Hit, SearchResult
from search.serving import answer as serving


def time_candidates(client, user_id, window, hits, passed, docs, filters, *, k1,
                    conversation_id, types, fields: tuple[str, ...] = (),
                    validity: Validity | None = None) -> float:
    """The time range as a query term (search.temporal): the memories created in it join
    ``passed`` (and ``docs``: their hashes, or only ``fields`` of each) even when they match
    no word; returns the term's weight."""
    ids, n_in = time_rows.ids_in_range(user_id, window, cap=settings.MEMORY_RERANK_WINDOW,
                                       conversation_id=conversation_id, types=types)
    seen = {r[0] for r in hits.rows}
    extra = [m for m in ids if m not in seen]
    if extra:
        found = docs_verified(serving.hashes(client, user_id, extra, fields=fields))
        for memory_id in extra:
            if memory_id in found and filters.keep(found[memory_id]) and (
                    validity is None or validity.keep(found[memory_id])):
                docs[memory_id] = found[memory_id]
                passed.append((memory_id, 0, {}))
    return temporal.time_term(hits.n_docs, n_in, k1)


def by_time(result: SearchResult, *, user_id, plan: TimePlan, filters: RecallFilters, limit,
            conversation_id, types, validity: Validity | None = None) -> None:
    """A query that is only a time ("yesterday", "上周"): the live memories created in that
    range, newest first, whose fact passes ``validity`` (score 0: no terms to score; explain
    says where the range came from).
    """
    rows = time_rows.in_range(user_id, plan.window, conversation_id=conversation_id,
                              types=types)
    plan.applied = True
    out = []
    for m in rows.order_by("-created_at", "memory_id")[:max(limit * 8, 200)]:
        doc = {"created_at": repr(m.created_at.timestamp()), "author": m.author,
               "tags": json.dumps(m.tags)}
        if not filters.keep(doc):
            continue
        until = m.valid_until.timestamp() if m.valid_until else None
        if validity is not None and not validity.holds(m.valid_from.timestamp(), until):
            continue
        out.append(Hit(
            memory_id=m.memory_id, content=m.content, type=m.type, version=m.version,
            score=0.0, metadata=m.metadata, created_at=m.created_at.timestamp(),
            importance=m.importance, conversation_id=m.conversation_id,
            explain=Explain(bm25=0.0, relevance=0.0, recency=0.0, importance=m.importance,
                            terms={}, final=0.0, weights={}, time=1.0),
            valid_from=m.valid_from.timestamp(), valid_until=until,
            superseded_by=m.superseded_by))
        if len(out) == limit:
            break
    result.results = out
