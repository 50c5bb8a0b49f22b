"""The truth. Redis mirrors these rows; it never holds anything the database lacks.

Every write goes through ``memories.services``; nothing else calls ``save()`` on these models.
"""

import secrets

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
    # Validity (memories.services.validity): a newer fact ended this one, an actor ended it
    # with no replacement, or undid either.
    SUPERSEDE = "supersede"
    INVALIDATE = "invalidate"
    REVALIDATE = "revalidate"


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
    # The content folded for matching (NFKC + case folding, ``memories.text_fold``): the
    # console's text filter is a plain LIKE on it, the same on SQLite and PostgreSQL.
    content_folded = models.TextField(blank=True, default="", editable=False)
    # Text that helps find this memory but is not part of it (e.g. the previous turn of the
    # conversation); indexed in its own field together with the content, never shown as it.
    context = models.TextField(blank=True, default="")
    # Who wrote ``context``: "" none, "client" (given on write or PATCH), "conversation" (the
    # server, from the neighbouring memories of the conversation), "session" (the server,
    # from the neighbouring messages of the session a promoted message came from). Only a
    # server-built context is rebuilt when a neighbour arrives (memories.services.context).
    context_from = models.CharField(max_length=16, blank=True, default="")
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
    # Agent scope: the agent that wrote it and the run (one task, one thread of work) it
    # came from; "" none. Set on create, never changed; a token may be restricted to agents.
    agent_id = models.CharField(max_length=128, blank=True, default="")
    run_id = models.CharField(max_length=128, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True)
    version = models.PositiveIntegerField(default=1)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.CharField(max_length=150, blank=True, default="")
    # Validity (world time, beside the versions' transaction time): the fact holds from
    # ``valid_from`` (default: creation time) until ``valid_until`` (null: still holds);
    # ``superseded_by`` names the memory that replaced it (null: none, or ended by hand).
    valid_from = models.DateTimeField()
    valid_until = models.DateTimeField(null=True, blank=True)
    superseded_by = models.CharField(max_length=20, null=True, blank=True, db_index=True)  # noqa: DJ001
    # Set when the database write succeeded but Redis could not be reached; reconcile clears it.
    needs_resync = models.BooleanField(default=False)
    # Why Redis could not take this row (text it cannot encode, in a row written before the
    # text check); empty when mirrored. Counted on the Index page and in /index/health.
    index_error = models.CharField(max_length=200, blank=True, default="")

    history = HistoricalRecords(
        bases=[HistoryKind],
        excluded_fields=["access_count", "accessed_at", "needs_resync", "index_error",
                         "content_folded"],
    )

    class Meta:
        indexes = [
            models.Index(fields=["user_id", "conversation_id", "type", "content_hash"]),
            models.Index(fields=["user_id", "created_at"]),
            models.Index(fields=["user_id", "conversation_id", "created_at"]),
            models.Index(fields=["user_id", "agent_id", "created_at"]),
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

    def holds_at(self, moment) -> bool:
        """Whether the fact holds at ``moment`` (an aware datetime): valid_from <= moment <
        valid_until."""
        return self.valid_from <= moment and (self.valid_until is None
                                              or moment < self.valid_until)


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



class MemorySlot(models.Model):
    """A slot a memory's text states a value for (``memories.supersession.claims``: subject
    and attribute, or a statement frame): how a write finds the current memories its fact
    may supersede with one indexed query. Written with the memory's text; gone with it."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="slots")
    user_id = models.CharField(max_length=128)
    slot = models.CharField(max_length=200)

    class Meta:
        indexes = [models.Index(fields=["user_id", "slot"])]

    def __str__(self) -> str:
        return f"{self.memory_id} {self.slot}"


class ConflictStatus(models.TextChoices):
    OPEN = "open"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Conflict(models.Model):
    """A proposed supersession: ``newer`` may make ``older`` no longer true. Accepting it
    supersedes ``older``; rejecting it records that both hold, and the pair is never
    proposed again (one row per pair). Deleted with either memory (a purge)."""

    user_id = models.CharField(max_length=128)
    newer = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    older = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    confidence = models.FloatField()
    # One sentence, and the slot and values it rests on (``{"slot", "older_value",
    # "newer_value", "words"}``).
    reason = models.CharField(max_length=500)
    evidence = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=ConflictStatus.choices,
                              default=ConflictStatus.OPEN)
    created_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=150, blank=True, default="")
    decision_reason = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["newer", "older"], name="conflict_one_per_pair"),
            models.CheckConstraint(condition=models.Q(confidence__gte=0)
                                   & models.Q(confidence__lte=1), name="conflict_confidence_0_1"),
        ]
        indexes = [models.Index(fields=["user_id", "status", "created_at"])]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.newer_id} > {self.older_id} ({self.status})"
