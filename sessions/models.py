"""Sessions (short-term conversations) and their messages: the truth behind the Redis hot window."""

from django.db import models


class Session(models.Model):
    """A short-term conversation; Redis holds its hot window, the database every message."""

    session_id = models.CharField(primary_key=True, max_length=128)
    user_id = models.CharField(max_length=128, db_index=True)
    agent_id = models.CharField(max_length=128, blank=True, default="")
    # The run (one task of the agent) it belongs to; "" none. Memories promoted or extracted
    # from the session carry its agent_id and run_id.
    run_id = models.CharField(max_length=128, blank=True, default="")
    system_prompt = models.TextField(blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    summary = models.TextField(blank=True, default="")
    # Who wrote ``summary``: "local" (sessions.formation.summary) or "llm" (the language
    # model); "" before the first fold.
    summary_method = models.CharField(max_length=8, blank=True, default="")
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
        db_table = "memories_session"  # kept from the memories app (moved here in 0012)
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
        db_table = "memories_message"  # kept from the memories app (moved here in 0012)
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_session_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq}"

