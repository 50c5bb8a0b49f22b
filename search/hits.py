"""A recall's candidates as hits: each one's final score by the ranking profile's formula,
and its explanation (``search.memory_search`` finds the candidates)."""

import json

from search import scoring, temporal
from search.results import Explain, Hit
from search.serving.field_search import Found
from search.serving.partial import is_partial


def is_hybrid(prof) -> bool:
    """Whether the profile's final score blends relevance with recency and importance (the
    keyword ranker's too), rather than being BM25 times ``w_relevance``."""
    return prof.ranker == "keyword" or prof.w_recency > 0 or prof.w_importance > 0


def hit_of(prof, memory_id: str, doc: dict, bm25: float, overlap: float, timed: float, *,
           best: float, now: float, boost_window=None) -> Hit:
    """Candidate ``memory_id`` (``doc``: its hot-store hash, whole or in part) as a Hit:
    ``bm25`` its BM25 plus ``timed`` (the time range's term, search.temporal), ``overlap``
    the share of query terms it holds, ``best`` the best such ``bm25`` of the candidates,
    ``now`` epoch seconds; ``boost_window``: the query's time range when it boosts. The
    per-term contributions and context terms come with the results (:func:`explain`)."""
    relevance = overlap if prof.ranker == "keyword" else (bm25 / best if best > 0 else 0.0)
    stamp = doc.get("accessed_at") if prof.recency_from == "accessed_at" else ""
    rec = scoring.recency(now - float(stamp or doc["created_at"]), prof.half_life_hours)
    imp = float(doc["importance"])
    if is_hybrid(prof):
        final = scoring.hybrid(relevance, rec, imp, prof.w_relevance, prof.w_recency,
                               prof.w_importance)
    else:
        final = bm25 * prof.w_relevance
    factor = 1.0
    if boost_window is not None:
        factor = temporal.boost_factor(float(doc["created_at"]), boost_window, prof.w_time)
        final *= factor
    partial = is_partial(doc)
    hit = Hit(
        memory_id=memory_id, content=doc["content"], type=doc["type"],
        version=int(doc["version"]), score=final,
        metadata={} if partial else json.loads(doc["metadata"]),
        created_at=float(doc["created_at"]), importance=imp,
        conversation_id=doc["conversation_id"] or None,
        explain=Explain(bm25=bm25 - timed, relevance=relevance, time_term=timed, recency=rec,
                        importance=imp, terms={}, final=final, time=factor,
                        weights={"relevance": prof.w_relevance, "recency": prof.w_recency,
                                 "importance": prof.w_importance}))
    hit.take_validity(doc)
    if not partial:  # a partial one is read whole with the results
        hit.take_scope(doc)
    return hit


def explain(results: list[Hit], found: Found, analyzer=None) -> None:
    """The results' per-term BM25 contributions, the serving index's own for the rows of
    ``found`` (its search) and none for the others (a time range's candidates); with the
    field's ``analyzer`` (a profile with context), the matched terms each result's content
    lacks: they came from its context. Analysing a memory's content is the costly part of
    an explanation: done for the returned hits only, not the window."""
    for h in results:
        h.explain.terms = found.contributions(h.memory_id)
    if analyzer is not None:
        for h in results:
            own = set(analyzer.tokens(h.content))
            h.explain.context_terms = [t for t in h.explain.terms if t not in own]
