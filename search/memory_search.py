"""Recall: ranked memories of one namespace for a query (reads only).

Candidates come from the process's serving index of the namespace (``search.serving``:
exact BM25 top-k over NumPy postings, caught up from the Redis write stream before each
search, so every returned write is seen); ``search.lua`` in Redis answers instead when
``MEMORY_SERVING_INDEX`` is off or the namespace's index format is one this process does
not serve. This module turns the candidates into results with an explanation, applying the
ranking profile's hybrid formula

    final = w_rel * relevance + w_rec * recency + w_imp * importance

where relevance is BM25 divided by the best BM25 among the candidates (0..1), recency is
``0.5 ** (age_hours / half_life_hours)`` and importance the memory's own (0..1). Profiles
that weigh recency or importance re-rank the top ``MEMORY_RERANK_WINDOW`` BM25 candidates
(a rescore window); the weights reorder matches, they never bring in non-matches.
The ``keyword`` ranker scores keyword overlap (share of distinct query terms present).

Filters and time (``search.recall_filters``): ``since`` / ``until`` / ``author`` / ``tags``
keep the matches that pass (scores unchanged; the candidate window widens until ``limit``
survivors or every match is seen, so a filter never hides a better survivor). A time range
named in the query ("last week", "上周") acts by the profile's ``temporal``: ``boost``
multiplies the final score of a match by ``search.temporal.boost_factor`` over the top
``MEMORY_RERANK_WINDOW`` BM25 candidates, ``filter`` keeps the matches in the range (or all of
them when none is). A query that is only a time lists the memories of that range, newest
first.
"""

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from memories import access, store
from search import scoring, synonyms, temporal
from search.index import fields as index_fields
from search.index import postings
from search.models import MatchMode, RankingProfile
from search.pending import docs_verified
from search.profiles import profile_resolve
from search.recall_filters import RecallFilters, TimePlan, time_plan
from search.serving import answer as serving
from search.serving import feed


@dataclass
class Explain:
    bm25: float
    relevance: float
    recency: float
    importance: float
    terms: dict[str, float]
    weights: dict[str, float]
    final: float
    # Matched terms found only in the memory's context text, not its content.
    context_terms: list[str] = field(default_factory=list)
    # The time boost multiplied into ``final`` (1 = none), see search.temporal.
    time: float = 1.0
    # Cosine of query and memory embeddings when the profile rescores semantically (None:
    # not rescored, or the memory's embedding is not computed yet).
    semantic: float | None = None
    # The query's time range as a term (search.temporal.time_term): its share of the score.
    time_term: float = 0.0


@dataclass
class Hit:
    memory_id: str
    content: str
    type: str
    version: int
    score: float
    metadata: dict
    created_at: float
    importance: float
    conversation_id: str | None
    explain: Explain


@dataclass
class SearchResult:
    results: list[Hit]
    match_mode_used: str
    profile: str
    took_ms: float
    terms: list[str] = field(default_factory=list)
    n_docs: int = 0
    avgdl: float = 0.0
    df: dict[str, int] = field(default_factory=dict)
    # {"range", "from", "mode", "applied"} when the query named a time, else None.
    time: dict | None = None
    # True when the search itself counted the results' recall hits (``count_hits``).
    hits_counted: bool = False


def query_terms(query: str, profile: RankingProfile) -> list[str]:
    """Distinct analysed query terms in first-seen order (each counted once, as Lucene),
    expanded by the synonym table when the profile says so."""
    analyzer = index_fields.ANALYZERS[_field(profile)]
    terms = list(dict.fromkeys(analyzer.tokens(query)))
    if profile.synonyms and terms:
        terms = synonyms.expand(terms, analyzer)
    return terms


def _field(profile: RankingProfile) -> str:
    return index_fields.content_field(stemming=profile.stemming, context=profile.context)


def memory_search(
    *, user_id: str, query: str, limit: int = 5, conversation_id: str | None = None,
    types: list[str] | None = None, profile: str | RankingProfile | None = None,
    match_mode: str | None = None, now: float | None = None,
    since: float | None = None, until: float | None = None, author: str | None = None,
    tags: list[str] | None = None, count_hits: bool = False,
) -> SearchResult:
    """Top ``limit`` memories of namespace ``user_id`` for ``query``.

    ``now``, ``since``, ``until``: epoch seconds (``now`` also anchors "yesterday"; default
    the clock). A query without usable tokens returns no results (never an error), unless it
    names a time. Raises NotFound for an unknown profile name and ``redis.RedisError`` when
    Redis is unreachable. ``took_ms`` is wall time in milliseconds.

    ``count_hits``: the caller will count a recall hit on each result
    (``memories.access.access_record``); the search may do it in its own round trip, and
    then says so in ``hits_counted`` (the caller then does not).
    """
    started = time.perf_counter()
    prof = profile_resolve(profile)
    mode = match_mode or prof.match_mode
    now = time.time() if now is None else now
    filters = RecallFilters(since=since, until=until, author=author, tags=tuple(tags or ()))
    plan = time_plan(query, mode=getattr(prof, "temporal", "off"), now=now, tz=_zone(),
                     latest=lambda: _newest(user_id),
                     earliest=lambda: _newest(user_id, "created_at"))
    terms = query_terms(plan.text, prof)
    result = SearchResult([], mode if mode != MatchMode.ALL_THEN_ANY else MatchMode.ALL,
                          prof.name, 0.0, terms)
    if terms:
        _run(result, prof, user_id=user_id, terms=terms, limit=limit, mode=mode,
             conversation_id=conversation_id, types=types, now=now, filters=filters,
             plan=plan, count_hits=count_hits)
    elif plan.window is not None:
        _by_time(result, user_id=user_id, plan=plan, filters=filters, limit=limit,
                 conversation_id=conversation_id, types=types)
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
         count_hits: bool = False):
    client = store.get_client()
    field_name = _field(prof)
    filters = filters or RecallFilters()
    plan = plan or TimePlan(text="")
    window = plan.window
    boost = window is not None and plan.mode == "boost"
    semantic = prof.w_semantic > 0 and _semantic_ready()
    # The query is encoded on another thread while the BM25 phase below runs.
    query_vector = _encode_soon(plan.text) if semantic else None
    wide = _hybrid(prof) or boost or filters.active or (window is not None) or semantic
    k = max(limit, settings.MEMORY_RERANK_WINDOW) if wide else limit
    lua_mode = "collect" if prof.ranker == "keyword" else mode
    own_field = index_fields.own_field(field_name)
    # A window ranked by BM25 and meaning alone (no filter, time, recency or importance)
    # needs no hashes to rank: only the results' are fetched, once ranked (_fill_results).
    lean = (wide and window is None and not filters.active and not _hybrid(prof)
            and lua_mode != "collect")
    # Hits are counted with the search when its rows are the results: one fetch of exactly
    # ``limit`` best rows (no window to re-rank, no second fetch in all_then_any).
    counting = {"at": time.time() if count_hits and not wide and mode != MatchMode.ALL_THEN_ANY
                and lua_mode != "collect" else None}

    def fetch(m):
        if getattr(settings, "MEMORY_SERVING_INDEX", True):
            try:
                return serving.search(
                    client, user_id=user_id, field_name=field_name, terms=terms, k=k,
                    k1=prof.k1, b=prof.b, mode=m, now=now, conversation_id=conversation_id,
                    types=types, with_hashes=not lean, own_field=own_field,
                    hit_time=counting["at"])
            except (feed.Unsupported, feed.NotReady):
                pass
        return postings.search_field(
            client, user_id=user_id, field=field_name, terms=terms, k=k, k1=prof.k1, b=prof.b,
            mode=m, now=now, conversation_id=conversation_id, types=types)

    def fetch_mode():
        if mode == MatchMode.ALL_THEN_ANY and lua_mode != "collect":
            found = fetch(MatchMode.ALL)
            if len(found.rows) < limit:
                result.match_mode_used = MatchMode.ANY
                return fetch(MatchMode.ANY)
            return found
        return fetch(lua_mode)

    in_range = filter_time = window is not None and plan.mode == "filter"
    vectors: dict = {}
    while True:
        hits = fetch_mode()
        docs = getattr(hits, "hashes", None)
        if docs is None and lean:
            docs = dict.fromkeys((r[0] for r in hits.rows), _UNREAD)
        elif docs is None:
            docs = serving.hashes(client, user_id, [r[0] for r in hits.rows])
        held = docs
        # Checked against the database: a write whose mirror failed (needs_resync) is served
        # as the database holds it, or not at all when forgotten or purged (search.pending).
        # A rescoring window reads its embeddings in the same query.
        flags = None
        if query_vector is not None:
            flags, vectors = _window_read(list(docs))
        docs = docs_verified(docs, flags)
        passed = [r for r in hits.rows if r[0] in docs and filters.keep(docs[r[0]])]
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
        time_weight = _time_candidates(client, user_id, window, hits, passed, docs, filters,
                                       k1=prof.k1, conversation_id=conversation_id, types=types)
    if not passed:
        return
    own_terms = getattr(hits, "own_terms", None) or {}
    # A lean window takes each row's BM25 from the serving index (the same sum of the same
    # contributions); the per-term explanation is made for the results only.
    sums = (getattr(hits, "scores", None) or {}) if lean else {}
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
        hits_out.append(Hit(
            memory_id=memory_id, content=doc["content"], type=doc["type"],
            version=int(doc["version"]), score=final,
            metadata={} if doc is _UNREAD else json.loads(doc["metadata"]),
            created_at=float(doc["created_at"]), importance=imp,
            conversation_id=doc["conversation_id"] or None,
            explain=Explain(bm25=bm25 - timed, relevance=relevance, time_term=timed, recency=rec, importance=imp,
                            terms=contributions, final=final, context_terms=context_terms,
                            time=factor,
                            weights={"relevance": prof.w_relevance, "recency": prof.w_recency,
                                     "importance": prof.w_importance}),
        ))
    if query_vector is not None:
        _rescore(hits_out, query_vector, prof.w_semantic, vectors, read=held)
    hits_out.sort(key=lambda h: (-h.score, h.memory_id))
    result.results = hits_out[:limit]
    if lean:
        _fill_results(result, hits_out, docs, own_terms, client=client, user_id=user_id,
                      field_name=field_name, own_field=own_field, terms=terms, limit=limit,
                      now=now, prof=prof, count_hits=count_hits)
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


# The hash of a window row not read from Redis (``lean`` windows): enough for the ranking
# loop; a row that becomes a result is filled from its hash (_fill_results). A pending row
# (search.pending) is replaced by its database state by docs_verified, as any hash is.
_UNREAD = {"content": "", "type": "", "version": "0", "metadata": "{}", "created_at": "0",
           "importance": "0", "conversation_id": ""}


def _fill_results(result, ranked, docs, own_terms, *, client, user_id, field_name, own_field,
                  terms, limit, now, prof, count_hits) -> None:
    """The best ``limit`` of ``ranked`` (a lean window, best first) with their hot-store
    hashes, in one ``feed.lua`` call (bounded: ``limit`` hashes), which also counts their
    recall hits when ``count_hits`` and every result is read from Redis. A row Redis no
    longer holds (forgotten since the search) gives its place to the next."""
    count = count_hits and all(docs[h.memory_id] is _UNREAD for h in ranked)
    out, pos = [], 0
    while len(out) < limit and pos < len(ranked):
        batch = ranked[pos:pos + limit - len(out)]
        pos += len(batch)
        unread = [h.memory_id for h in batch if docs[h.memory_id] is _UNREAD]
        got = serving.rows(client, user_id=user_id, field_name=field_name, memory_ids=unread,
                           own_field=own_field, terms=terms,
                           hit_time=time.time() if count else None)
        if got.counted:
            access.access_counted(user_id=user_id, unlisted=got.unlisted, dropped=[])
        own_terms.update(got.own_terms or {})
        for h in batch:
            doc = docs[h.memory_id]
            if doc is _UNREAD:
                doc = got.hashes.get(h.memory_id)
                if doc is None:
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
            out.append(h)
    result.results = out
    result.hits_counted = count


def _time_candidates(client, user_id, window, hits, passed, docs, filters, *, k1,
                     conversation_id, types) -> float:
    """The time range as a query term (search.temporal): the memories created in it join
    ``passed`` (and ``docs``) even when they match no word; returns the term's weight."""
    from search import time_rows

    ids, n_in = time_rows.ids_in_range(user_id, window, cap=settings.MEMORY_RERANK_WINDOW,
                                       conversation_id=conversation_id, types=types)
    seen = {r[0] for r in hits.rows}
    extra = [m for m in ids if m not in seen]
    if extra:
        found = docs_verified(serving.hashes(client, user_id, extra))
        for memory_id in extra:
            if memory_id in found and filters.keep(found[memory_id]):
                docs[memory_id] = found[memory_id]
                passed.append((memory_id, 0, {}))
    return temporal.time_term(hits.n_docs, n_in, k1)


def _semantic_ready() -> bool:
    from search.semantic import encoder

    return encoder.model_available()


def _encode_soon(text: str):
    """The call that gives the query's vector, its encode started now; None when the query is
    not rescored: no text, or CJK in it (the shipped encoder is English-only, so Chinese,
    Japanese and Korean stay with BM25)."""
    from search import embeddings
    from search.semantic import encoder

    if not text.strip() or encoder.cjk_share(text) > 0:
        return None
    return embeddings.query_vector_soon(text)


def _window_read(memory_ids: list[str]):
    from search import embeddings

    return embeddings.window_read(memory_ids)


def _rescore(hits: list[Hit], query_vector, w: float, vectors: dict, read) -> None:
    """Semantic rescoring of the window (search.semantic.rescore): the final score becomes
    ``(1 - w) * final / max(final) + w * cos``; embeddings were computed by the worker.
    ``query_vector``: the call that gives the query's vector (:func:`_encode_soon`);
    ``vectors``: the embeddings of the memories in ``read`` (the window, read with its
    check); the hits not in it (a time range's candidates) are read here."""
    from search import embeddings
    from search.semantic.rescore import mix

    if not hits:
        return
    unread = [h.memory_id for h in hits if h.memory_id not in read]
    if unread:
        vectors = {**vectors, **embeddings.vectors_for(unread)}
    if not vectors:
        # None computed yet (the worker embeds after commit): BM25's order as it is. The
        # query's encode ran for nothing (and is cached), a cost only until the job has run.
        return
    query = query_vector()
    known = [h.memory_id for h in hits if h.memory_id in vectors]
    products = dict(zip(known, (np.stack([vectors[m] for m in known]) @ query).tolist(),
                        strict=True))
    cosines = [products.get(h.memory_id) for h in hits]
    for h, score, cos in zip(hits, mix([h.score for h in hits], cosines, w), cosines,
                             strict=True):
        h.score = h.explain.final = score
        h.explain.semantic = cos


def _by_time(result: SearchResult, *, user_id, plan: TimePlan, filters: RecallFilters, limit,
             conversation_id, types) -> None:
    """A query that is only a time ("yesterday", "上周"): the live memories created in that
    range, newest first (score 0: no terms to score; explain says where the range came from).
    """
    from search import time_rows

    rows = time_rows.in_range(user_id, plan.window, conversation_id=conversation_id,
                              types=types)
    plan.applied = True
    out = []
    for m in rows.order_by("-created_at", "memory_id")[:max(limit * 8, 200)]:
        doc = {"created_at": repr(m.created_at.timestamp()), "author": m.author,
               "tags": json.dumps(m.tags)}
        if not filters.keep(doc):
            continue
        out.append(Hit(
            memory_id=m.memory_id, content=m.content, type=m.type, version=m.version,
            score=0.0, metadata=m.metadata, created_at=m.created_at.timestamp(),
            importance=m.importance, conversation_id=m.conversation_id,
            explain=Explain(bm25=0.0, relevance=0.0, recency=0.0, importance=m.importance,
                            terms={}, final=0.0, weights={}, time=1.0)))
        if len(out) == limit:
            break
    result.results = out


def _expire(memory_ids: list[str]) -> None:
    """Short-term memories found past ``expire_at``: drop them from Redis now."""
    from memories.mirror import sync_memories

    sync_memories(memory_ids)
