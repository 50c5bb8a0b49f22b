"""Built-in rows shared by the data migration and the test fixtures."""

PROFILES = [
    # Raw Lucene BM25 over the memory's own content: score == BM25.
    dict(name="bm25", ranker="bm25", k1=1.2, b=0.75, w_relevance=1.0, w_recency=0.0,
         w_importance=0.0, half_life_hours=720.0, stemming=False, synonyms=False,
         match_mode="any", builtin=True, is_default=False),
    # Keyword overlap + recency + importance, 0.5 / 0.3 / 0.2.
    dict(name="keyword", ranker="keyword", k1=1.2, b=0.75, w_relevance=0.5, w_recency=0.3,
         w_importance=0.2, half_life_hours=168.0, stemming=False, synonyms=False,
         match_mode="any", builtin=True, is_default=False),
    # BM25 on Snowball-stemmed terms.
    dict(name="stemmed", ranker="bm25", k1=1.2, b=0.75, w_relevance=1.0, w_recency=0.0,
         w_importance=0.0, half_life_hours=720.0, stemming=True, synonyms=False,
         match_mode="any", builtin=False, is_default=False),
    # Stemmed BM25 over content + context (neighbouring turns), the query's time as a boost
    # and a term, semantic rescoring of the window: the best on LoCoMo, default.
    dict(name="context", ranker="bm25", k1=1.2, b=0.75, w_relevance=1.0, w_recency=0.0,
         w_importance=0.0, half_life_hours=720.0, stemming=True, synonyms=False, context=True,
         match_mode="any", builtin=False, is_default=True, temporal="boost", w_time=0.5,
         w_semantic=0.4),
]
ROLES = ("viewer", "editor", "admin")


def ensure(profile_model=None, group_model=None) -> None:
    """Create the built-in profiles and role groups where missing (idempotent)."""
    if profile_model is None:
        from django.contrib.auth.models import Group as group_model  # noqa: N813

        from search.models import RankingProfile as profile_model  # noqa: N813
    fields = {f.name for f in profile_model._meta.get_fields()}
    for spec in PROFILES:
        # A migration's historical model may predate a field (e.g. ``context``).
        profile_model.objects.get_or_create(
            name=spec["name"], defaults={k: v for k, v in spec.items() if k in fields})
    for name in ROLES:
        group_model.objects.get_or_create(name=name)
