"""Time in a recall (``search.temporal``): a query that is only a time lists that range's
memories, and a range named with words joins the window as a term of its own. An empty
query with filters lists their matches (:func:`by_filters`)."""

import datetime as dt
import json
import math

from django.conf import settings

from memories import listing
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
               "tags": json.dumps(m.tags), "agent_id": m.agent_id, "run_id": m.run_id,
               "metadata": json.dumps(m.metadata)}
        if not filters.keep(doc):
            continue
        until = m.valid_until.timestamp() if m.valid_until else None
        if validity is not None and not validity.holds(m.valid_from.timestamp(), until):
            continue
        out.append(_row_hit(m))
        if len(out) == limit:
            break
    result.results = out


def by_filters(result: SearchResult, *, user_id, filters: RecallFilters, limit,
               conversation_id, types, validity: Validity | None = None) -> None:
    """An empty query with filters: the live memories that pass them and ``validity``,
    newest first (score 0), read from the database with recall's conversation and type
    scoping (``memories.listing.scoped``: the same conditions as ``filters.keep``)."""
    def at(seconds):
        return None if seconds is None or seconds in (math.inf, -math.inf) else (
            dt.datetime.fromtimestamp(seconds, tz=dt.UTC))

    rows = listing.scoped(
        time_rows.live(user_id, conversation_id=conversation_id, types=types),
        since=at(filters.since), until=at(filters.until), author=filters.author,
        tags=filters.tags, agents=filters.agents, run_id=filters.run_id,
        metadata=dict(filters.metadata),
        valid=None if validity is None else (at(validity.lo), at(validity.hi)))
    result.results = [_row_hit(m) for m in
                      rows.order_by("-created_at", "-memory_id")[:limit]]


def _row_hit(m) -> Hit:
    """A memory row as a recall result of score 0 (a listing: no terms to score)."""
    return Hit(
        memory_id=m.memory_id, content=m.content, type=m.type, version=m.version,
        score=0.0, metadata=m.metadata, created_at=m.created_at.timestamp(),
        importance=m.importance, conversation_id=m.conversation_id,
        explain=Explain(bm25=0.0, relevance=0.0, recency=0.0, importance=m.importance,
                        terms={}, final=0.0, weights={}, time=1.0),
        valid_from=m.valid_from.timestamp(),
        valid_until=m.valid_until.timestamp() if m.valid_until else None,
        superseded_by=m.superseded_by, author=m.author, tags=list(m.tags),
        agent_id=m.agent_id, run_id=m.run_id)
