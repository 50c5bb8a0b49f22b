"""Ranking profiles and synonym sets: the settings the search engine ranks with."""

from django.db import models
from simple_history.models import HistoricalRecords


class Ranker(models.TextChoices):
    BM25 = "bm25"
    KEYWORD = "keyword"


class MatchMode(models.TextChoices):
    ANY = "any"
    ALL = "all"
    ALL_THEN_ANY = "all_then_any"


class RankingProfile(models.Model):
    """Named ranking settings; ``bm25`` and ``keyword`` are built in (data migration)."""

    name = models.CharField(max_length=64, unique=True)
    ranker = models.CharField(max_length=16, choices=Ranker.choices, default=Ranker.BM25)
    k1 = models.FloatField(default=1.2)
    b = models.FloatField(default=0.75)
    w_relevance = models.FloatField(default=1.0)
    w_recency = models.FloatField(default=0.0)
    w_importance = models.FloatField(default=0.0)
    half_life_hours = models.FloatField(default=24 * 30)
    recency_from = models.CharField(max_length=16, default="created_at")
    stemming = models.BooleanField(default=False)
    synonyms = models.BooleanField(default=False)
    # Score against content + context (its own field, postings and statistics).
    context = models.BooleanField(default=False)
    match_mode = models.CharField(max_length=16, choices=MatchMode.choices, default="any")
    # What a time range parsed from the query does (search.temporal): off, filter, boost;
    # w_time is the boost (a match in the range scores 1 + w_time times higher).
    temporal = models.CharField(max_length=8, default="off")
    w_time = models.FloatField(default=0.5)
    # Share of the score taken by the cosine of query and memory embeddings over the BM25
    # window (search.semantic.rescore); 0 = no semantic rescoring.
    w_semantic = models.FloatField(default=0.0)
    is_default = models.BooleanField(default=False)
    builtin = models.BooleanField(default=False)
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords(table_name="memories_historicalrankingprofile")

    class Meta:
        db_table = "memories_rankingprofile"  # kept from the memories app (moved here in 0012)
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class SynonymSet(models.Model):
    """Terms that mean the same, one set per row (like a line of a Solr synonyms file).

    Applied to queries only, by profiles with ``synonyms`` on; the index is never expanded.
    """

    terms = models.JSONField(default=list)
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "memories_synonymset"  # kept from the memories app (moved here in 0012)
        ordering = ["id"]

    def __str__(self) -> str:
        return ", ".join(self.terms)


class SynonymText(models.Model):
    """The synonym table as last saved from the console, comments and blank lines included
    (one row at most), so ``#`` comments survive a save. ``SynonymSet`` stays what queries
    read; ``search.synonym_sets.synonyms_replace`` writes both in one transaction, and the text is
    shown again only while its sets are exactly the table's."""

    text = models.TextField(blank=True, default="")
    updated_by = models.CharField(max_length=150, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"synonym text ({len(self.text)} characters)"



class MemoryEmbedding(models.Model):
    """A memory's sentence embedding for semantic rescoring (``search.semantic``), computed
    by the worker after the memory's write commits (``search.embeddings``), never in a
    request. ``vector``: ``DIM`` float32 values, little-endian, a unit vector; empty, with
    ``model`` ``search.embeddings.LEFT_TO_BM25``, for a memory not encoded on purpose (mostly
    CJK text: the model is English-only). Deleted with its
    memory (a purge leaves none behind); a stale one (``content_hash`` differs from the
    memory's) is recomputed and, until then, not used."""

    memory = models.OneToOneField("memories.Memory", on_delete=models.CASCADE, primary_key=True,
                                  related_name="embedding")
    # Indexed: a new memory whose text another one already has reuses its vector.
    content_hash = models.CharField(max_length=64, db_index=True)
    model = models.CharField(max_length=64)
    vector = models.BinaryField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"embedding of {self.memory_id}"
