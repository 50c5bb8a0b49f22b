"""Recall: ranked memories of one namespace for a query (reads only).

One way to answer a query that has terms: the process's serving index of the namespace
(``search.serving``: exact BM25 top k over NumPy postings, caught up from the Redis write
stream before each search, so every returned write is seen), which gives each row's BM25 and
its per-term contributions (``search.serving.field_search.Found``). The explanation's terms
come from there too: the formula is written once in the engine, and once in
``search.scoring``, the pure oracle the tests compare the engine with. A large namespace's
first recall in a process waits, up to ``MEMORY_SERVING_WAIT_SECONDS``, for its index being
loaded or built on a background thread; past that it raises IndexRebuilding (503 with
Retry-After). A query that is only a time, or only filters, is answered by the database
(``search.time_recall``). This module turns the candidates into results with an
explanation, applying the ranking profile's hybrid formula

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
window).

Filters and time (``search.recall_filters``): ``since`` / ``until`` / ``author`` / ``tags``
keep the matches that pass (scores unchanged; the candidate window widens until ``limit``
survivors or every match is seen, so a filter never hides a better survivor). A time range
named in the query ("last week", "上周") acts by the profile's ``temporal``: ``boost``
multiplies the final score of a match by ``search.temporal.boost_factor`` over the top
``MEMORY_RERANK_WINDOW`` BM25 candidates, ``filter`` keeps the matches in the range (or all of
them when none is). A query that is only a time lists the memories of that range, newest
first.

Its parts: ``search.results`` (the shapes it answers), ``search.hits`` (a candidate's final
score and explanation), ``search.lean_window`` (a window whose results alone are read from
the hot store), ``search.rescoring`` (meaning) and ``search.time_recall`` (a query's time
range).
"""

import time
from dataclasses import dataclass, field

from django.conf import settings

from memories import access, store, tracing
from memories.errors import IndexRebuilding
from search import index_lost, lean_window, rescoring, synonym_sets, temporal, time_recall
from search.hits import explain, hit_of, is_hybrid
from search.index import fields as index_fields
from search.models import MatchMode, RankingProfile
from search.pending import docs_verified, row_flags
from search.profiles import profile_resolve
from search.recall_filters import RecallFilters, TimePlan, Validity, time_plan, validity_for
from search.results import Hit, SearchResult
from search.serving import answer as serving
from search.serving import feed
from search.serving.field_search import Found
from search.serving.partial import RANK_FIELDS, UNREAD

# Seconds a client is told to wait (Retry-After) when a recall's index is still being built.
BUILDING_RETRY_AFTER_SECONDS = 5


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
    names a time. ``took_ms``: wall time in milliseconds. Raises NotFound for an unknown
    profile name; IndexRebuilding when Redis lost the namespace's index
    (``search.index_lost``) or this process's index of it is still being built after
    ``MEMORY_SERVING_WAIT_SECONDS``; ``search.serving.feed.Unsupported`` for an index format
    this code does not serve (a newer one); ``redis.RedisError`` when Redis is unreachable.

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
    plan = _time_plan(query, prof, now=now, user_id=user_id)
    validity = validity_for(now=now, as_of=as_of, include_superseded=include_superseded,
                            window=plan.window)
    terms = query_terms(plan.text, prof)
    result = SearchResult([], mode if mode != MatchMode.ALL_THEN_ANY else MatchMode.ALL,
                          prof.name, 0.0, terms)
    if terms:
        _run(result, _Recall(
            user_id=user_id, prof=prof, terms=terms, limit=limit, mode=mode, now=now,
            conversation_id=conversation_id, types=types, filters=filters, plan=plan,
            validity=validity, count_hits=count_hits))
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


def _time_plan(query: str, prof: RankingProfile, *, now: float, user_id: str) -> TimePlan:
    """The query's time words read in the profile's ``temporal`` mode (``time_plan``)."""
    return time_plan(query, mode=getattr(prof, "temporal", "off"), now=now, tz=_zone(),
                     latest=lambda: _newest(user_id),
                     earliest=lambda: _newest(user_id, "created_at"))


def _zone():
    from zoneinfo import ZoneInfo

    return ZoneInfo(settings.TIME_ZONE)


def _newest(user_id: str, order: str = "-created_at"):
    """The namespace's newest live memory time (``order="created_at"``: its oldest)."""
    from memories.models import Memory

    return (Memory.objects.filter(user_id=user_id, deleted_at__isnull=True)
            .order_by(order).values_list("created_at", flat=True).first())


@dataclass
class _Recall:
    """One recall with terms: what was asked, and how its window is read (set once, from the
    profile, filters and time plan, by ``__post_init__``)."""

    user_id: str
    prof: RankingProfile
    terms: list[str]
    limit: int
    mode: str
    now: float
    conversation_id: str | None
    types: list[str] | None
    filters: RecallFilters
    plan: TimePlan
    validity: Validity | None
    count_hits: bool
    client: object = None
    field_name: str = ""
    # The index's mode: every match for the keyword ranker, else ``mode`` (all_then_any
    # asks ``all`` first).
    search_mode: str = ""
    # A range named in the query multiplies the scores (``boost``).
    boost: bool = False
    # The call that gives the query's vector (semantic rescoring), or None.
    query_vector: object = None
    # A window of MEMORY_RERANK_WINDOW candidates is re-ranked; a lean one by BM25 and
    # meaning alone (no hash read to rank it, search.lean_window); a narrow one by what the
    # hashes hold (recency, importance, a filter, a time range): only those fields of its
    # rows are read (search.serving.partial), and the results' whole hashes once ranked.
    wide: bool = False
    lean: bool = False
    narrow: bool = False
    hash_fields: tuple[str, ...] = ()
    # The rows' database check (and their embeddings when rescored): search.pending.
    check: object = None
    # Count the hits with the search when its rows are the results: one fetch of exactly
    # ``limit`` best rows (no window to re-rank, no second fetch in all_then_any).
    hit_time: float | None = None

    def __post_init__(self):
        prof, window = self.prof, self.plan.window
        self.client = store.get_client()
        self.field_name = _field(prof)
        self.search_mode = "collect" if prof.ranker == "keyword" else self.mode
        self.boost = window is not None and self.plan.mode == "boost"
        semantic = prof.w_semantic > 0 and rescoring.ready()
        # The query is encoded on another thread while the BM25 phase runs.
        self.query_vector = rescoring.encode_soon(self.plan.text) if semantic else None
        self.wide = (is_hybrid(prof) or self.boost or self.filters.active or window is not None
                     or semantic)
        ranked_by_hashes = is_hybrid(prof) or window is not None or self.filters.active
        self.lean = self.wide and not ranked_by_hashes and self.search_mode != "collect"
        self.narrow = self.wide and not self.lean and self.search_mode != "collect"
        self.hash_fields = (*RANK_FIELDS, *self.filters.fields) if self.narrow else ()
        if (self.count_hits and not self.wide and self.mode != MatchMode.ALL_THEN_ANY
                and self.search_mode != "collect"):
            self.hit_time = time.time()
        # Checked against the database: a write whose mirror failed (needs_resync) is served
        # as the database holds it, or not at all when forgotten or purged. Read while Redis
        # answers the search's freshness check (the two waits overlap).
        self.check = tracing.traced("memory.db_check", rescoring.window_read
                                    if self.query_vector is not None else row_flags)


@dataclass
class _Window:
    """The candidates of a recall: the last search's answer, its rows that passed the
    filters and validity (``(memory_id, dl, {term: tf})``), their hashes checked against
    the database (``docs``) and as Redis held them (``held``), and their embeddings."""

    hits: Found
    passed: list
    docs: dict
    held: dict
    vectors: dict = field(default_factory=dict)


def _run(result: SearchResult, r: _Recall) -> None:
    """Fill ``result`` with the recall ``r``'s hits, best first."""
    w = _window(result, r)
    result.n_docs, result.avgdl, result.df = w.hits.n_docs, w.hits.avgdl, w.hits.df
    if w.hits.expired:
        _expire(w.hits.expired)
    time_weight = _time_candidates(r, w)
    if not w.passed:
        return
    ranked = _ranked(r, w, time_weight)
    result.results = ranked[:r.limit]
    if r.lean or r.narrow:
        lean_window.fill_results(result, ranked, w.docs, client=r.client, user_id=r.user_id,
                                 field_name=r.field_name, limit=r.limit, now=r.now,
                                 prof=r.prof, count_hits=r.count_hits,
                                 position=w.hits.position)
    explain(result.results, w.hits,
            index_fields.ANALYZERS[r.field_name] if r.prof.context else None)


def _window(result: SearchResult, r: _Recall) -> _Window:
    """Search, widening the window until ``limit`` rows pass the filters, validity and a
    time filter, or every match was seen: exact under any filter."""
    k = max(r.limit, settings.MEMORY_RERANK_WINDOW) if r.wide else r.limit
    filter_time = r.plan.window is not None and r.plan.mode == "filter"
    while True:
        hits = _fetch(result, r, k)
        held, docs, vectors = _checked(r, hits)
        passed = [row for row in hits.rows if row[0] in docs and r.filters.keep(docs[row[0]])
                  and (r.validity is None or r.validity.keep(docs[row[0]]))]
        timely = [row for row in passed if temporal.in_window(
            float(docs[row[0]]["created_at"]), r.plan.window)] if filter_time else passed
        exhausted = len(hits.rows) < k or k >= hits.n_docs or r.search_mode == "collect"
        done = exhausted or len(timely) >= r.limit
        if hits.counted:
            # Rows the database dropped were counted and are not results; when the window
            # widens, none of this fetch's rows are (the wider fetch is counted by the caller).
            access.access_counted(user_id=r.user_id, unlisted=hits.unlisted, dropped=[
                m for m in held if m not in docs] if done else list(held))
            result.hits_counted = done
            r.hit_time = None
        if done:
            break
        k = min(k * 8, max(hits.n_docs, r.limit))
    if filter_time:
        r.plan.applied = bool(timely)
        if timely:
            passed = timely
    return _Window(hits, passed, docs, held, vectors)


def _fetch(result: SearchResult, r: _Recall, k: int) -> Found:
    """The top ``k`` in the recall's mode; all_then_any: ``all``, then ``any`` when fewer
    than ``limit`` rows hold every term (said in ``result.match_mode_used``)."""
    if r.mode == MatchMode.ALL_THEN_ANY and r.search_mode != "collect":
        found = _search(r, MatchMode.ALL, k)
        if len(found.rows) < r.limit:
            result.match_mode_used = MatchMode.ANY
            return _search(r, MatchMode.ANY, k)
        return found
    return _search(r, r.search_mode, k)


def _index_search(r: _Recall, mode: str, k: int) -> Found:
    """``search.serving.answer.search`` for the recall, with the rows' hashes (or some
    fields of them) unless the window is lean. Raises IndexRebuilding while this process's
    index is still being built after ``MEMORY_SERVING_WAIT_SECONDS``, and once Redis is
    found to have lost the namespace's index; ``feed.Unsupported`` for a format this code
    does not serve."""
    try:
        return index_lost.settled_first(r.client, r.user_id, lambda: serving.search(
            r.client, user_id=r.user_id, field_name=r.field_name, terms=r.terms, k=k,
            k1=r.prof.k1, b=r.prof.b, mode=mode, now=r.now, conversation_id=r.conversation_id,
            types=r.types, with_hashes=not r.lean, hit_time=r.hit_time,
            hash_fields=r.hash_fields, prefetch=r.check,
            valid=r.validity.bounds if r.validity else None,
            wait=settings.MEMORY_SERVING_WAIT_SECONDS))
    except feed.NotReady:
        raise IndexRebuilding(
            f"the index of namespace {r.user_id!r} is still being loaded by this server "
            "process; try again shortly", field="user_id",
            retry_after_seconds=BUILDING_RETRY_AFTER_SECONDS) from None


def _search(r: _Recall, mode: str, k: int) -> Found:
    # Its Redis commands are the span's children.
    return tracing.traced("memory.index", _index_search)(r, mode, k)


def _checked(r: _Recall, hits: Found) -> tuple[dict, dict, dict]:
    """``(held, docs, vectors)`` of the rows: their hashes as Redis holds them (``UNREAD``
    in a lean window), the same checked against the database (``search.pending``), and
    their embeddings when the window is rescored. The check made while Redis answered
    (``hits.prefetched``) serves when it covers the rows."""
    held = dict.fromkeys((row[0] for row in hits.rows), UNREAD) if r.lean else hits.hashes
    read = hits.prefetched
    checked = read[1] if read is not None and read[0].issuperset(held) else r.check(list(held))
    flags, vectors = checked if r.query_vector is not None else (checked, {})
    return held, docs_verified(held, flags), vectors


def _time_candidates(r: _Recall, w: _Window) -> float:
    """The weight of the query's time range as a term of its own (``boost`` with
    ``w_time``), its memories joining the window; 0 without one."""
    if not (r.boost and r.prof.w_time > 0):
        return 0.0
    return time_recall.time_candidates(
        r.client, r.user_id, r.plan.window, w.hits, w.passed, w.docs, r.filters, k1=r.prof.k1,
        conversation_id=r.conversation_id, types=r.types, fields=r.hash_fields,
        validity=r.validity)


def _ranked(r: _Recall, w: _Window, time_weight: float) -> list[Hit]:
    """Every passed row as a Hit, by final score (ties by memory id), rescored by meaning
    when the profile says so. Each row's BM25 is the index's own sum."""
    scored = []
    for memory_id, _, tfs in w.passed:
        doc = w.docs.get(memory_id)
        if doc is None:  # expired or removed between the two reads
            continue
        timed = time_weight if time_weight and temporal.in_window(
            float(doc["created_at"]), r.plan.window) else 0.0
        scored.append((memory_id, doc, w.hits.scores.get(memory_id, 0.0) + timed,
                       len(tfs) / len(r.terms), timed))
    if r.mode == MatchMode.ALL and r.prof.ranker == "keyword":
        scored = [s for s in scored if s[3] == 1.0]
    best = max((s[2] for s in scored), default=0.0)
    boost_window = r.plan.window if r.boost else None
    hits = [hit_of(r.prof, *s, best=best, now=r.now, boost_window=boost_window)
            for s in scored]
    if r.query_vector is not None:
        rescoring.rescore(hits, r.query_vector, r.prof.w_semantic, w.vectors, read=w.held)
    hits.sort(key=lambda h: (-h.score, h.memory_id))
    return hits


def _expire(memory_ids: list[str]) -> None:
    """Short-term memories found past ``expire_at``: drop them from Redis now."""
    from memories.mirror import sync_memories

    sync_memories(memory_ids)
