"""Explain a hit: the BM25 term contributions and the weighted score parts."""

import time

from lab.evaluation import clean_k
from memories.errors import NotFound
from memories.models import Memory
from search import scoring
from search.index import fields as index_fields
from search.memory_search import memory_search
from search.models import Ranker
from search.profiles import profile_resolve


def explain_hit(
    *,
    user_id: str,
    query: str,
    memory_id: str,
    profile,
    k: int = 10,
    conversation_id: str | None = None,
    now: float | None = None,
) -> dict:
    """The score of one result taken apart: each query term's BM25 part (tf, df, idf, dl,
    avgdl, the saturated tf part, its contribution), recency (age, half-life), importance,
    the weights and the final score.

    The ranking is recomputed (the same ``memory_search``), so df, N and avgdl are the live
    statistics the score used; tf and dl come from the profile's analyzer on the memory's
    indexed text. Raises NotFound when the memory is not in the profile's top ``k``.
    """
    prof = profile_resolve(profile)
    now = time.time() if now is None else now
    found = memory_search(
        user_id=user_id,
        query=query,
        limit=clean_k(k),
        profile=prof,
        conversation_id=conversation_id,
        now=now,
    )
    hit = next((h for h in found.results if h.memory_id == memory_id), None)
    memory = Memory.objects.filter(memory_id=memory_id, user_id=user_id).first()
    if hit is None or memory is None:
        raise NotFound(
            f"{memory_id} is not in the top {k} of {prof.name!r} for this query", field="memory_id"
        )
    field = index_fields.content_field(stemming=prof.stemming, context=prof.context)
    tf = index_fields.ANALYZERS[field].term_frequencies(
        index_fields.field_text(field, memory.content, memory.context)
    )
    dl = sum(tf.values())
    terms = []
    for term in found.terms:
        df = found.df.get(term, 0)
        count = tf.get(term, 0)
        idf = scoring.idf(found.n_docs, min(df, found.n_docs)) if df else 0.0
        part = scoring.tf_part(count, dl, found.avgdl, prof.k1, prof.b) if count else 0.0
        terms.append(
            {
                "term": term,
                "tf": count,
                "df": df,
                "idf": idf,
                "dl": dl,
                "avgdl": found.avgdl,
                "tf_part": part,
                "contribution": hit.explain.terms.get(term, 0.0),
                "context_only": term in hit.explain.context_terms,
            }
        )
    stamp = (
        memory.accessed_at if prof.recency_from == "accessed_at" and memory.accessed_at else None
    )
    stamp_epoch = stamp.timestamp() if stamp else hit.created_at
    parts = score_parts(hit)
    return {
        "hit": hit,
        "profile": prof,
        "field": field,
        "terms": terms,
        "n_docs": found.n_docs,
        "avgdl": found.avgdl,
        "dl": dl,
        "k1": prof.k1,
        "b": prof.b,
        "age_hours": max(0.0, (now - stamp_epoch) / 3600.0),
        "recency_from": prof.recency_from if stamp else "created_at",
        "half_life_hours": prof.half_life_hours,
        "parts": parts,
        "hybrid": prof.ranker == Ranker.KEYWORD or prof.w_recency > 0 or prof.w_importance > 0,
    }


def score_parts(hit) -> dict[str, float]:
    """The final score split into weight × component parts: relevance, recency, importance.

    For a pure BM25 profile the relevance part is the (weighted) raw BM25 score, so the parts
    always add up to ``hit.score``.
    """
    weights = hit.explain.weights
    recency = weights.get("recency", 0.0) * hit.explain.recency
    importance = weights.get("importance", 0.0) * hit.explain.importance
    return {
        "relevance": max(0.0, hit.score - recency - importance),
        "recency": recency,
        "importance": importance,
    }

