"""The truth. Redis mirrors these rows; it never holds anything the database lacks.

Every write goes through ``memories.services``; nothing else calls ``save()`` on these models.
"""

import secrets

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords


def new_memory_id() -> str:
    """``mem_`` + 16 lowercase hex digits (64 random bits)."""
    return f"mem_{secrets.token_hex(8)}"


class MemoryType(models.TextChoices):
    LONG_TERM = "long_term"
    SHORT_TERM = "short_term"
    WORKING = "working"


class ChangeKind(models.TextChoices):
    CREATE = "create"
    EDIT = "edit"
    IMPORTANCE = "importance"
    ROLLBACK = "rollback"
    FORGET = "forget"
    RESTORE = "restore"
    PURGE = "purge"
    PROMOTE = "promote"
    CONSOLIDATE = "consolidate"
    ARCHIVE = "archive"


class HistoryKind(models.Model):
    """Extra columns on every historical Memory row: what kind of change, and by whom.

    ``changed_by`` keeps the actor's name even when the change came from an API token or a
    job, where no request user exists.
    """

    kind = models.CharField(max_length=16, choices=ChangeKind.choices, default=ChangeKind.EDIT)
    changed_by = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        abstract = True


class Memory(models.Model):
    memory_id = models.CharField(primary_key=True, max_length=20, default=new_memory_id)
    user_id = models.CharField(max_length=128, db_index=True)
    # NULL = user-wide (visible from every conversation); DESIGN.md keeps it nullable.
    conversation_id = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001
    type = models.CharField(
        max_length=16, choices=MemoryType.choices, default=MemoryType.LONG_TERM
    )
    content = models.TextField()
    # Text that helps find this memory but is not part of it (e.g. the previous turn of the
    # conversation); indexed in its own field together with the content, never shown as it.
    context = models.TextField(blank=True, default="")
    keywords = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list, blank=True)
    importance = models.FloatField(default=0.5)
    access_count = models.PositiveIntegerField(default=0)
    accessed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    expire_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=64, blank=True, default="")
    author = models.CharField(max_length=128, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True)
    version = models.PositiveIntegerField(default=1)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.CharField(max_length=150, blank=True, default="")
    # Set when the database write succeeded but Redis could not be reached; reconcile clears it.
    needs_resync = models.BooleanField(default=False)

    history = HistoricalRecords(
        bases=[HistoryKind],
        excluded_fields=["access_count", "accessed_at", "needs_resync"],
    )

    class Meta:
        indexes = [
            models.Index(fields=["user_id", "conversation_id", "type", "content_hash"]),
            models.Index(fields=["user_id", "created_at"]),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(importance__gte=0) & models.Q(importance__lte=1),
                name="memory_importance_0_1",
            ),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="memory_version_1"),
        ]
        ordering = ["-created_at", "memory_id"]

    def __str__(self) -> str:
        return f"{self.memory_id} ({self.user_id})"

    @property
    def is_forgotten(self) -> bool:
        return self.deleted_at is not None


class Session(models.Model):
    """A short-term conversation; Redis holds its hot window, the database every message."""

    session_id = models.CharField(primary_key=True, max_length=128)
    user_id = models.CharField(max_length=128, db_index=True)
    agent_id = models.CharField(max_length=128, blank=True, default="")
    system_prompt = models.TextField(blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    summary = models.TextField(blank=True, default="")
    # Messages with seq <= this are folded into ``summary`` (and trimmed from the hot window).
    summary_upto_seq = models.PositiveIntegerField(default=0)
    # Kept by every append (and fold), so an append needs neither MAX(seq) nor a SUM over
    # the unfolded messages, which grew with the session: the last seq, and the characters
    # of the messages after ``summary_upto_seq``.
    last_seq = models.PositiveIntegerField(default=0)
    unfolded_chars = models.PositiveBigIntegerField(default=0)
    ttl_seconds = models.PositiveIntegerField(default=3600)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-updated_at", "session_id"]

    def __str__(self) -> str:
        return self.session_id


class Message(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=16)
    content = models.TextField()
    ts = models.DateTimeField()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_session_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq}"


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
    is_default = models.BooleanField(default=False)
    builtin = models.BooleanField(default=False)
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiToken(models.Model):
    """A bearer token; only its SHA-256 is stored, the token itself is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=64, blank=True, default="")
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    # Namespaces (user_ids) this token may touch; empty = every namespace its role allows.
    namespaces = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class AccessFold(models.Model):
    """One batch of recall hits folded from Redis into ``Memory.access_count`` (see
    ``memories.access``). The primary key makes folding a batch exactly-once: a second
    attempt, by a concurrent or a restarted folder, fails on it and changes nothing."""

    batch_id = models.CharField(primary_key=True, max_length=32)
    user_id = models.CharField(max_length=128)
    hits = models.PositiveIntegerField()
    folded_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.batch_id} ({self.user_id}: {self.hits} hits)"


class AuditEvent(models.Model):
    """Who did what to which target, and why. Never holds memory content."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.CharField(max_length=150)
    action = models.CharField(max_length=32, db_index=True)
    target = models.CharField(max_length=200, db_index=True)
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.target}"


class SynonymSet(models.Model):
    """Terms that mean the same, one set per row (like a line of a Solr synonyms file).

    Applied to queries only, by profiles with ``synonyms`` on; the index is never expanded.
    """

    terms = models.JSONField(default=list)
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return ", ".join(self.terms)


# --- Ranking lab: judgments, query sets, evaluation runs --------------------------------------
# Written only by ``memories.lab`` (services); read by its selectors, the lab pages and API.


class Judgment(models.Model):
    """A reviewer's graded relevance (0-3) of one memory for one query of one namespace.

    Reviewers are kept apart (one row per reviewer); evaluation combines them. ``memory_id``
    is not a foreign key: a judgment outlives a purge, and evaluation skips non-live ids.
    """

    user_id = models.CharField(max_length=128)
    query = models.CharField(max_length=1000)
    memory_id = models.CharField(max_length=20, db_index=True)
    grade = models.PositiveSmallIntegerField()
    reviewer = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["user_id", "query", "memory_id", "reviewer"]
        indexes = [models.Index(fields=["user_id", "query"])]
        constraints = [
            models.UniqueConstraint(fields=["user_id", "query", "memory_id", "reviewer"],
                                    name="judgment_one_per_reviewer"),
            models.CheckConstraint(condition=models.Q(grade__lte=3), name="judgment_grade_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.query!r} {self.memory_id}={self.grade} ({self.reviewer})"


class QuerySet(models.Model):
    """A named list of queries of one namespace, evaluated together by a run.

    (Not Django's ``models.QuerySet``: always imported from ``memories.models``.)
    """

    name = models.CharField(max_length=100, unique=True)
    user_id = models.CharField(max_length=128)
    queries = models.JSONField(default=list)
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class EvalRun(models.Model):
    """One evaluation, frozen: what each profile returned, the judgments used as gains, the
    metrics, and what they depended on (each profile's full settings and history version,
    the index statistics), so a later profile change or new judgment never alters it."""

    name = models.CharField(max_length=200)
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    k = models.PositiveSmallIntegerField()
    query_set = models.ForeignKey(QuerySet, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="runs")
    # Blank: every reviewer's grades, averaged; otherwise only this reviewer's.
    reviewer = models.CharField(max_length=150, blank=True, default="")
    # [{"name", ...settings, "history_id", "version"}] in evaluation order.
    profiles = models.JSONField(default=list)
    # {user_id: {field: {"N", "avgdl"}}} when the run was made.
    index_stats = models.JSONField(default=dict)
    # {profile name: {"ndcg", "precision", "recall", "mrr", "queries"}}.
    metrics = models.JSONField(default=dict)
    # [{"profile", "user_id", "query", "ranked", "gains", "ndcg", ...}]
    per_query = models.JSONField(default=list)
    # [{"user_id", "query", "memory_id", "profiles", "best_rank"}]: results to judge next.
    unjudged = models.JSONField(default=list)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"

    def save(self, *args, **kwargs):
        # Immutable: a run is written once; a changed run would no longer say what was measured.
        if self.pk is not None and not self._state.adding:
            raise ValueError("an evaluation run is immutable; create a new run instead")
        super().save(*args, **kwargs)
