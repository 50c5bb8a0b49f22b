"""The recall log (one :class:`Recall` per logged recall, its ranked :class:`RecallResult`
rows) and :class:`RecallFeedback` on recalled memories.

Written only by ``recalls.log`` (traces) and ``recalls.feedback`` (feedback); read by
``recalls.readers``. No memory text is copied here: a result names a memory and the version
that was served, whose text the memory's history keeps.
"""

import re

from django.db import models

from memories.models import Memory

RECALL_ID_RE = re.compile(r"^rc_[0-9a-f]{16}$")


class Recall(models.Model):
    """One recall as it was answered: who asked what, through which interface, with which
    filters and profile, and how long it took (``took_ms``, milliseconds)."""

    recall_id = models.CharField(primary_key=True, max_length=20)
    at = models.DateTimeField()
    user_id = models.CharField(max_length=128)  # the namespace
    actor = models.CharField(max_length=150)  # the token's (or console user's) username
    # The API token (accounts.ApiToken's id) the recall came with; null from the console.
    token_id = models.PositiveIntegerField(null=True, blank=True)
    agent_id = models.CharField(max_length=128, blank=True, default="")  # "": none named
    interface = models.CharField(max_length=16)
    query = models.TextField(blank=True, default="")
    # Filters and options applied, as the recall took them (ISO times), and the time range
    # the query named (``SearchResult.time``), if any.
    filters = models.JSONField(default=dict, blank=True)
    time_range = models.JSONField(null=True, blank=True)
    profile = models.CharField(max_length=100)
    # The profile's version number then (search.profile_services.profile_versions), set when
    # the trace is written.
    profile_version = models.PositiveIntegerField(null=True, blank=True)
    match_mode = models.CharField(max_length=16, blank=True, default="")
    took_ms = models.FloatField()

    class Meta:
        ordering = ["-at", "-recall_id"]
        indexes = [
            models.Index(fields=["user_id", "-at", "-recall_id"], name="recall_ns_at"),
            models.Index(fields=["actor", "-at"], name="recall_actor_at"),
            models.Index(fields=["agent_id", "-at"], name="recall_agent_at"),
            models.Index(fields=["at", "took_ms"], name="recall_at"),
        ]

    def __str__(self) -> str:
        return f"{self.recall_id} {self.user_id} {self.query[:40]!r}"


class RecallResult(models.Model):
    """One result of a recall: its rank (1 = first), the memory's version that was served,
    its score and the explain's figures (``{"bm25", "relevance", "recency", "importance",
    "semantic", "time", "terms": {term: share}}``; no text). A purge deletes the row with
    its memory (cascade); ``db_constraint`` is off so a trace written just after its
    memory's purge is not refused."""

    recall = models.ForeignKey(Recall, on_delete=models.CASCADE, related_name="results")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, db_constraint=False,
                               related_name="recall_results")
    rank = models.PositiveSmallIntegerField()
    version = models.PositiveIntegerField()
    score = models.FloatField()
    explain = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["recall", "rank"]
        constraints = [models.UniqueConstraint(fields=["recall", "rank"],
                                               name="recall_result_rank")]

    def __str__(self) -> str:
        return f"{self.recall_id} #{self.rank} {self.memory_id} v{self.version}"


class RecallFeedback(models.Model):
    """What one actor said of one recalled memory: a grade 0..3 (``useful`` true is 3,
    false 0) and an optional note. Self-contained (namespace and query copied from the
    recall) so it outlives the trace's retention and travels in exports; the lab reads it
    as the rater "agent feedback". A purge deletes it with its memory."""

    recall = models.ForeignKey(Recall, on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="feedback")
    recall_key = models.CharField(max_length=20)  # the recall's id, kept after its expiry
    user_id = models.CharField(max_length=128)
    query = models.TextField(blank=True, default="")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="feedback")
    actor = models.CharField(max_length=150)
    grade = models.PositiveSmallIntegerField()
    note = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["user_id", "query"], name="feedback_ns_query")]
        constraints = [
            models.UniqueConstraint(fields=["recall_key", "memory", "actor"],
                                    name="feedback_one_per_actor"),
            models.CheckConstraint(condition=models.Q(grade__lte=3), name="feedback_grade_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.recall_key} {self.memory_id}={self.grade} ({self.actor})"
