"""Ranking lab: judgments, query sets, evaluation runs.

Written only by the lab services (``lab.judgments``, ``lab.query_sets``, ``lab.runs``); read by
its selectors, the lab pages and API.
"""

from django.db import models


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
        db_table = "memories_judgment"  # kept from the memories app (moved here in 0012)
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

    (Not Django's ``models.QuerySet``: always imported from ``lab.models``.)
    """

    name = models.CharField(max_length=100, unique=True)
    user_id = models.CharField(max_length=128)
    queries = models.JSONField(default=list)
    # {query: note}: what a good answer to each query is (its information need). Only
    # queries of ``queries`` have one; a query removed from the set loses its note.
    notes = models.JSONField(default=dict, blank=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "memories_queryset"  # kept from the memories app (moved here in 0012)
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
        db_table = "memories_evalrun"  # kept from the memories app (moved here in 0012)
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"

    def save(self, *args, **kwargs):
        # Immutable: a run is written once; a changed run would no longer say what was measured.
        if self.pk is not None and not self._state.adding:
            raise ValueError("an evaluation run is immutable; create a new run instead")
        super().save(*args, **kwargs)

