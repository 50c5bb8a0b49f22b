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
"""

import json
import math
import time
from dataclasses import dataclass, field

from django.conf import settings

from memories import store
from search import scoring, synonyms
from search.index import fields as index_fields
from search.index import postings
from search.models import MatchMode, RankingProfile
from search.profiles import profile_resolve
from search.serving import feed as serving


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
) -> SearchResult:
    """Top ``limit`` memories of namespace ``user_id`` for ``query``.

    A query without usable tokens returns no results (never an error). Raises NotFound for
    an unknown profile name and ``redis.RedisError`` when Redis is unreachable.
    ``took_ms`` is wall time in milliseconds.
    """
    started = time.perf_counter()
    prof = profile_resolve(profile)
    mode = match_mode or prof.match_mode
    now = time.time() if now is None else now
    terms = query_terms(query, prof)
    result = SearchResult([], mode if mode != MatchMode.ALL_THEN_ANY else MatchMode.ALL,
                          prof.name, 0.0, terms)
    if terms:
        _run(result, prof, user_id=user_id, terms=terms, limit=limit, mode=mode,
             conversation_id=conversation_id, types=types, now=now)
    result.took_ms = (time.perf_counter() - started) * 1000
    return result


def _hybrid(prof: RankingProfile) -> bool:
    return prof.ranker == "keyword" or prof.w_recency > 0 or prof.w_importance > 0


def _run(result: SearchResult, prof, *, user_id, terms, limit, mode, conversation_id, types, now):
    client = store.get_client()
    field_name = _field(prof)
    k = max(limit, settings.MEMORY_RERANK_WINDOW) if _hybrid(prof) else limit
    lua_mode = "collect" if prof.ranker == "keyword" else mode

    def fetch(m):
        if getattr(settings, "MEMORY_SERVING_INDEX", True):
            try:
                return serving.search(
                    client, user_id=user_id, field_name=field_name, terms=terms, k=k,
                    k1=prof.k1, b=prof.b, mode=m, now=now, conversation_id=conversation_id,
                    types=types)
            except serving.Unsupported:
                pass
        return postings.search_field(
            client, user_id=user_id, field=field_name, terms=terms, k=k, k1=prof.k1, b=prof.b,
            mode=m, now=now, conversation_id=conversation_id, types=types)

    if mode == MatchMode.ALL_THEN_ANY and lua_mode != "collect":
        hits = fetch(MatchMode.ALL)
        if len(hits.rows) < limit:
            hits = fetch(MatchMode.ANY)
            result.match_mode_used = MatchMode.ANY
    else:
        hits = fetch(lua_mode)
    result.n_docs, result.avgdl, result.df = hits.n_docs, hits.avgdl, hits.df
    if hits.expired:
        _expire(hits.expired)
    if not hits.rows:
        return
    docs = _hashes(client, user_id, [r[0] for r in hits.rows])
    scored = []
    for memory_id, dl, tfs in hits.rows:
        doc = docs.get(memory_id)
        if doc is None:  # expired or removed between the two reads
            continue
        contributions = scoring.bm25_terms(terms, tfs, dl, hits.n_docs, hits.df, hits.avgdl,
                                           k1=prof.k1, b=prof.b)
        overlap = len(tfs) / len(terms)
        context_terms = []
        if prof.context:
            own = set(index_fields.ANALYZERS[field_name].tokens(doc["content"]))
            context_terms = [t for t in contributions if t not in own]
        scored.append((memory_id, doc, contributions, math.fsum(contributions.values()), overlap,
                       context_terms))
    if mode == MatchMode.ALL and prof.ranker == "keyword":
        scored = [s for s in scored if s[4] == 1.0]
    best = max((s[3] for s in scored), default=0.0)
    hits_out = []
    for memory_id, doc, contributions, bm25, overlap, context_terms in scored:
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
        hits_out.append(Hit(
            memory_id=memory_id, content=doc["content"], type=doc["type"],
            version=int(doc["version"]), score=final, metadata=json.loads(doc["metadata"]),
            created_at=float(doc["created_at"]), importance=imp,
            conversation_id=doc["conversation_id"] or None,
            explain=Explain(bm25=bm25, relevance=relevance, recency=rec, importance=imp,
                            terms=contributions, final=final, context_terms=context_terms,
                            weights={"relevance": prof.w_relevance, "recency": prof.w_recency,
                                     "importance": prof.w_importance}),
        ))
    hits_out.sort(key=lambda h: (-h.score, h.memory_id))
    result.results = hits_out[:limit]


def _hashes(client, user_id: str, memory_ids: list[str]) -> dict[str, dict[str, str]]:
    pipe = client.pipeline(transaction=False)
    for memory_id in memory_ids:
        pipe.hgetall(store.key(user_id, "m", memory_id))
    out = {}
    for memory_id, raw in zip(memory_ids, pipe.execute(), strict=True):
        if raw:
            out[memory_id] = {store.text(k): store.text(v) for k, v in raw.items()}
    return out


def _expire(memory_ids: list[str]) -> None:
    """Short-term memories found past ``expire_at``: drop them from Redis now."""
    from memories.mirror import sync_memories

    sync_memories(memory_ids)
