"""Recall: ranked memories of one namespace for a query (reads only).

Candidates come from the process's serving index of the namespace (``search.serving``:
exact BM25 top-k over NumPy postings, caught up from the Redis write stream before each
search, so every returned write is seen). While this process builds a large namespace's
index (in the background), its postings are read from Redis in small commands and scored
here (``search.serving.chunked``); ``search.lua`` in Redis answers when
``MEMORY_SERVING_INDEX`` is off or the namespace's index format is one this process does
not serve. This module turns the candidates into results with an explanation, applying the
ranking profile's hybrid formula

    final = w_rel * relevance + w_rec * recency + w_imp * importance

where relevance is BM25 divided by the best BM25 among the candidates (0..1), recency is
``0.5 ** (age_hours / half_life_hours)`` and importance the memory's own (0..1). Profiles
that weigh recency or importance re-rank the top ``MEMORY_RERANK_WINDOW`` BM25 candidates
(a rescore window); the weights reorder matches, they never bring in non-matches.
The ``keyword`` ranker scores keyword overlap (share of distinct query terms present).

Validity (``search.recall_filters.Validity``): by default only facts valid ``now`` are
answered (not superseded or ended by then); ``as_of`` answers what held then, whenever it
was recorded; ``include_superseded`` answers every match with its validity. The serving
index keeps each document's validity interval and filters while it ranks (exact, no wider
window); the other paths check the hot-store hashes and widen as a filter does.

Filters and time (``search.recall_filters``): ``since`` / ``until`` / ``author`` / ``tags``
keep the matches that pass (scores unchanged; the candidate window widens until ``limit``
survivors or every match is seen, so a filter never hides a better survivor). A time range
named in the query ("last week", "上周") acts by the profile's ``temporal``: ``boost``
multiplies the final score of a match by ``search.temporal.boost_factor`` over the top
``MEMORY_RERANK_WINDOW`` BM25 candidates, ``filter`` keeps the matches in the range (or all of
them when none is). A query that is only a time lists the memories of that range, newest
first.

Its parts: ``search.results`` (the shapes it answers), ``search.lean_window`` (a window whose
results alone are read from the hot store), ``search.rescoring`` (meaning) and
``search.time_recall`` (a query's time range).
"""

import json
import math
import time

from django.conf import settings

from memories import access, store, tracing
from search import index_lost, lean_window, rescoring, scoring, synonym_sets, temporal, time_recall
from search.index import fields as index_fields
from search.index import postings
from search.models import MatchMode, RankingProfile
from search.pending import docs_verified, row_flags
from search.profiles import profile_resolve
from search.recall_filters import RecallFilters, TimePlan, Validity, time_plan, validity_for
from search.results import Explain, Hit, SearchResult
from search.serving import answer as serving
from search.serving import chunked, feed
from search.serving.partial import RANK_FIELDS, UNREAD, is_partial


def query_terms(query: str, profile: RankingProfile) -> list[str]:
    """Distinct analysed query terms in first-seen order (each counted once, as Lucene),
    expanded by the synonym table when the profile says so."""
    analyzer = index_fields.ANALYZERS[_field(profile)]
    terms = list(dict.fromkeys(analyzer.tokens(query)))
    if profile.synonyms and terms:
        terms = synonym_sets.expand(terms, analyzer)
    return terms


def _field(profile: RankingProfile) -> str:
    return index_fields.content_field(stemming=profile.stemming, context=profile.context)


@tracing.recall_span
def memory_search(
    *, user_id: str, query: str, limit: int = 5, conversation_id: str | None = None,
    types: list[str] | None = None, profile: str | RankingProfile | None = None,
    match_mode: str | None = None, now: float | None = None,
    since: float | None = None, until: float | None = None, author: str | None = None,
    tags: list[str] | None = None, count_hits: bool = False, as_of: float | None = None,
    include_superseded: bool = False, agents: list[str] | None = None,
    run_id: str | None = None, metadata: dict[str, str] | None = None,
) -> SearchResult:
    """Top ``limit`` memories of namespace ``user_id`` for ``query``.

    ``as_of`` (epoch seconds): the facts that held then (``search.recall_filters.Validity``);
    ``include_superseded``: every match, whatever its validity.

    Filters (``search.recall_filters.RecallFilters``): ``since``, ``until``, ``author``,
    ``tags``, ``agents`` (the memory's ``agent_id`` is one of them), ``run_id``, ``metadata``
    (dotted path -> string). An empty query with a filter or ``as_of`` lists the matches,
    newest first (``search.time_recall.by_filters``).

    ``now``, ``since``, ``until``: epoch seconds (``now`` also anchors "yesterday"; default
    the clock). A query without usable tokens returns no results (never an error), unless it
    names a time. Raises NotFound for an unknown profile name, IndexRebuilding when Redis
    lost the namespace's index (``search.index_lost``) and ``redis.RedisError`` when
    Redis is unreachable. ``took_ms`` is wall time in milliseconds.

    ``count_hits``: the caller will count a recall hit on each result
    (``memories.access.access_record``); the search may do it in its own round trip, and
    then says so in ``hits_counted`` (the caller then does not).
    """
    started = time.perf_counter()
    prof = profile_resolve(profile)
    mode = match_mode or prof.match_mode
    now = time.time() if now is None else now
    filters = RecallFilters(since=since, until=until, author=author, tags=tuple(tags or ()),
                            agents=tuple(agents or ()), run_id=run_id,
                            metadata=tuple(sorted((metadata or {}).items())))
    plan = time_plan(query, mode=getattr(prof, "temporal", "off"), now=now, tz=_zone(),
                     latest=lambda: _newest(user_id),
                     earliest=lambda: _newest(user_id, "created_at"))
    validity = validity_for(now=now, as_of=as_of, include_superseded=include_superseded,
                            window=plan.window)
    terms = query_terms(plan.text, prof)
    result = SearchResult([], mode if mode != MatchMode.ALL_THEN_ANY else MatchMode.ALL,
                          prof.name, 0.0, terms)
    if terms:
        _run(result, prof, user_id=user_id, terms=terms, limit=limit, mode=mode,
             conversation_id=conversation_id, types=types, now=now, filters=filters,
             plan=plan, count_hits=count_hits, validity=validity)
        if not result.n_docs:  # no document at all: empty, or lost by Redis?
            index_lost.refuse_if_lost(store.get_client(), user_id)
    elif plan.window is not None:
        time_recall.by_time(result, user_id=user_id, plan=plan, filters=filters, limit=limit,
                            conversation_id=conversation_id, types=types, validity=validity)
    elif not query.strip() and (filters.active or as_of is not None):
        time_recall.by_filters(result, user_id=user_id, filters=filters, limit=limit,
                               conversation_id=conversation_id, types=types, validity=validity)
    result.time = plan.explain()
    result.took_ms = (time.perf_counter() - started) * 1000
    return result


def _zone():
    from zoneinfo import ZoneInfo

    return ZoneInfo(settings.TIME_ZONE)


def _newest(user_id: str, order: str = "-created_at"):
    """The namespace's newest live memory time (``order="created_at"``: its oldest)."""
    from memories.models import Memory

    return (Memory.objects.filter(user_id=user_id, deleted_at__isnull=True)
            .order_by(order).values_list("created_at", flat=True).first())


def _hybrid(prof: RankingProfile) -> bool:
    return prof.ranker == "keyword" or prof.w_recency > 0 or prof.w_importance > 0


def _run(result: SearchResult, prof, *, user_id, terms, limit, mode, conversation_id, types, now,
         filters: RecallFilters | None = None, plan: TimePlan | None = None,
         count_hits: bool = False, validity: Validity | None = None):
    client = store.get_client()
    field_name = _field(prof)
    filters = filters or RecallFilters()
    plan = plan or TimePlan(text="")
    window = plan.window
    boost = window is not None and plan.mode == "boost"
    semantic = prof.w_semantic > 0 and rescoring.ready()
    # The query is encoded on another thread while the BM25 phase below runs.
    query_vector = rescoring.encode_soon(plan.text) if semantic else None
    wide = _hybrid(prof) or boost or filters.active or (window is not None) or semantic
    k = max(limit, settings.MEMORY_RERANK_WINDOW) if wide else limit
    lua_mode = "collect" if prof.ranker == "keyword" else mode
    own_field = index_fields.own_field(field_name)
    # A window ranked by BM25 and meaning alone (no filter, time, recency or importance)
    # needs no hashes to rank: only the results' are fetched, once ranked (search.lean_window).
    lean = (wide and window is None and not filters.active and not _hybrid(prof)
            and lua_mode != "collect")
    # A window ranked by what the hashes hold (recency, importance, a filter, a time range)
    # reads only those fields of its rows (search.serving.partial), and the results' whole
    # hashes once ranked, as a lean window does: 100 whole hashes were most of its time.
    narrow = wide and not lean and lua_mode != "collect"
    hash_fields = (*RANK_FIELDS, *filters.fields) if narrow else ()
    # Hits are counted with the search when its rows are the results: one fetch of exactly
    # ``limit`` best rows (no window to re-rank, no second fetch in all_then_any).
    counting = {"at": time.time() if count_hits and not wide and mode != MatchMode.ALL_THEN_ANY
                and lua_mode != "collect" else None}

    settled: list = []  # a "new:" stamp settled by this recall (search.index_lost)

    def fetch(m):
        if getattr(settings, "MEMORY_SERVING_INDEX", True):
            try:
                return serving.search(
                    client, user_id=user_id, field_name=field_name, terms=terms, k=k,
                    k1=prof.k1, b=prof.b, mode=m, now=now, conversation_id=conversation_id,
                    types=types, with_hashes=not lean,
                    own_field="" if narrow else own_field, hit_time=counting["at"],
                    hash_fields=hash_fields, prefetch=window_check,
                    valid=validity.bounds if validity else None)
            except feed.NotReady:
                # Its index builds on a background thread: read the postings in small
                # commands (search.lua's one script would hold Redis 200+ ms at 300k).
                return _unfiltered(chunked.search_field(
                    client, user_id=user_id, field=field_name, terms=terms, k=k, k1=prof.k1,
                    b=prof.b, mode=m, now=now, conversation_id=conversation_id, types=types))
            except feed.Unsupported as exc:
                if index_lost.is_new_stamp(exc.args[0]) and not settled:
                    settled.append(exc.args[0])  # once per recall
                    index_lost.settle_new(client, user_id, exc.args[0])
                    return fetch(m)
                # else an older format: search.lua answers while a reindex upgrades it
        return _unfiltered(postings.search_field(
            client, user_id=user_id, field=field_name, terms=terms, k=k, k1=prof.k1, b=prof.b,
            mode=m, now=now, conversation_id=conversation_id, types=types))

    fetch = tracing.traced("memory.index", fetch)  # its Redis commands are its children

    def fetch_mode():
        if mode == MatchMode.ALL_THEN_ANY and lua_mode != "collect":
            found = fetch(MatchMode.ALL)
            if len(found.rows) < limit:
                result.match_mode_used = MatchMode.ANY
                return fetch(MatchMode.ANY)
            return found
        return fetch(lua_mode)

    # Checked against the database: a write whose mirror failed (needs_resync) is served as
    # the database holds it, or not at all when forgotten or purged (search.pending). A
    # rescoring window reads its embeddings in the same query. The serving index's search
    # reads it while Redis answers its freshness check (the two waits overlap).
    window_check = tracing.traced("memory.db_check", rescoring.window_read
                                  if query_vector is not None else row_flags)
    in_range = filter_time = window is not None and plan.mode == "filter"
    vectors: dict = {}
    while True:
        hits = fetch_mode()
        docs = getattr(hits, "hashes", None)
        if docs is None and lean and not (validity and getattr(hits, "unfiltered", False)):
            docs = dict.fromkeys((r[0] for r in hits.rows), UNREAD)
        elif docs is None:
            docs = serving.hashes(client, user_id, [r[0] for r in hits.rows],
                                  fields=hash_fields)
        held = docs
        read = getattr(hits, "prefetched", None)
        checked = read[1] if read is not None and read[0].issuperset(docs) else window_check(
            list(docs))
        flags = checked
        if query_vector is not None:
            flags, vectors = checked
        docs = docs_verified(docs, flags)
        passed = [r for r in hits.rows if r[0] in docs and filters.keep(docs[r[0]])
                  and (validity is None or validity.keep(docs[r[0]]))]
        if filter_time:
            timely = [r for r in passed
                      if temporal.in_window(float(docs[r[0]]["created_at"]), window)]
            in_range = bool(timely)
        # Widen until enough survive or every match was seen: exact under any filter.
        exhausted = len(hits.rows) < k or k >= hits.n_docs or lua_mode == "collect"
        done = exhausted or len(timely if filter_time else passed) >= limit
        if getattr(hits, "counted", False):
            # Rows the database dropped were counted and are not results; when the window
            # widens, none of this fetch's rows are (the wider fetch is counted by the caller).
            access.access_counted(user_id=user_id, unlisted=hits.unlisted,
                                  dropped=[m for m in held if m not in docs] if done else list(held))
            result.hits_counted = done
            counting["at"] = None
        if done:
            break
        k = min(k * 8, max(hits.n_docs, limit))
    if filter_time:
        plan.applied = in_range
        if in_range:
            passed = timely
    result.n_docs, result.avgdl, result.df = hits.n_docs, hits.avgdl, hits.df
    if hits.expired:
        _expire(hits.expired)
    time_weight = 0.0
    if boost and prof.w_time > 0:
        time_weight = time_recall.time_candidates(
            client, user_id, window, hits, passed, docs, filters, k1=prof.k1,
            conversation_id=conversation_id, types=types, fields=hash_fields,
            validity=validity)
    if not passed:
        return
    own_terms = getattr(hits, "own_terms", None) or {}
    # A window (lean, or read in part) takes each row's BM25 from the serving index (the same
    # sum of the same contributions, to the bit); the per-term explanation is made for the
    # results only (below): for 100 rows it was a millisecond of Python.
    sums = (getattr(hits, "scores", None) or {}) if lean or narrow else {}
    scored = []
    for memory_id, dl, tfs in passed:
        doc = docs.get(memory_id)
        if doc is None:  # expired or removed between the two reads
            continue
        if memory_id in sums:
            contributions, bm25 = None, sums[memory_id]
        else:
            contributions = scoring.bm25_terms(terms, tfs, dl, hits.n_docs, hits.df,
                                               hits.avgdl, k1=prof.k1, b=prof.b) if tfs else {}
            bm25 = math.fsum(contributions.values())
        timed = time_weight if time_weight and temporal.in_window(
            float(doc["created_at"]), window) else 0.0
        overlap = len(tfs) / len(terms)
        context_terms = []  # filled for the returned hits only, below
        scored.append((memory_id, doc, contributions, bm25 + timed, overlap, context_terms,
                       timed))
    if mode == MatchMode.ALL and prof.ranker == "keyword":
        scored = [s for s in scored if s[4] == 1.0]
    best = max((s[3] for s in scored), default=0.0)
    hits_out = []
    for memory_id, doc, contributions, bm25, overlap, context_terms, timed in scored:
        relevance = overlap if prof.ranker == "keyword" else (bm25 / best if best > 0 else 0.0)
        stamp = doc.get("accessed_at") if prof.recency_from == "accessed_at" else ""
        stamp = float(stamp or doc["created_at"])
        rec = scoring.recency(now - stamp, prof.half_life_hours)
        imp = float(doc["importance"])
        if _hybrid(prof):
            final = scoring.hybrid(relevance, rec, imp, prof.w_relevance, prof.w_recency,
                                   prof.w_importance)
        else:
            final = bm25 * prof.w_relevance
        factor = 1.0
        if boost:
            factor = temporal.boost_factor(float(doc["created_at"]), window, prof.w_time)
            final *= factor
        hit = Hit(
            memory_id=memory_id, content=doc["content"], type=doc["type"],
            version=int(doc["version"]), score=final,
            metadata={} if is_partial(doc) else json.loads(doc["metadata"]),
            created_at=float(doc["created_at"]), importance=imp,
            conversation_id=doc["conversation_id"] or None,
            explain=Explain(bm25=bm25 - timed, relevance=relevance, time_term=timed, recency=rec, importance=imp,
                            terms=contributions, final=final, context_terms=context_terms,
                            time=factor,
                            weights={"relevance": prof.w_relevance, "recency": prof.w_recency,
                                     "importance": prof.w_importance}),
        )
        hit.take_validity(doc)
        if not is_partial(doc):  # a partial one is read whole with the results
            hit.take_scope(doc)
        hits_out.append(hit)
    if query_vector is not None:
        rescoring.rescore(hits_out, query_vector, prof.w_semantic, vectors, read=held)
    hits_out.sort(key=lambda h: (-h.score, h.memory_id))
    result.results = hits_out[:limit]
    if lean or narrow:
        lean_window.fill_results(result, hits_out, docs, own_terms, client=client, user_id=user_id,
                      field_name=field_name, own_field=own_field, terms=terms, limit=limit,
                      now=now, prof=prof, count_hits=count_hits,
                      position=getattr(hits, "position", None))
        tfs_of = {memory_id: (dl, tfs) for memory_id, dl, tfs in passed}
        for h in result.results:
            if h.explain.terms is None:
                dl, tfs = tfs_of[h.memory_id]
                h.explain.terms = scoring.bm25_terms(terms, tfs, dl, hits.n_docs, hits.df,
                                                     hits.avgdl, k1=prof.k1, b=prof.b)
    if prof.context:
        # Matched terms the content lacks came from context. Analysing a memory's content is
        # the costly part of an explanation: done for the returned hits, not the window.
        # The search's own round trip brought each hit's own-content terms (feed.lua); only
        # hits it did not answer (the Lua or catch-up path, time candidates) are analysed.
        analyzer = index_fields.ANALYZERS[field_name]
        for h in result.results:
            own = own_terms.get(h.memory_id)
            if own is None:
                own = set(analyzer.tokens(h.content))
            h.explain.context_terms = [t for t in h.explain.terms if t not in own]


def _unfiltered(found):
    """A search answered by Redis's postings (chunked reads, search.lua), which know nothing
    of validity: its rows' hashes are checked (search.recall_filters.Validity)."""
    found.unfiltered = True
    return found


def _expire(memory_ids: list[str]) -> None:
    """Short-term memories found past ``expire_at``: drop them from Redis now."""
    from memories.mirror import sync_memories

    sync_memories(memory_ids)
