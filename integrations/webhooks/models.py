"""Webhook endpoints, the outbox of events and the delivery log (app ``integrations``).

Writers: ``endpoints.py`` for WebhookEndpoint, ``outbox.py`` for WebhookEvent and
WebhookDelivery; nobody else saves these rows.
"""

import datetime as dt
import secrets

from django.conf import settings
from django.db import models


def new_secret() -> str:
    return "whsec_" + secrets.token_hex(24)


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(12)


class WebhookEndpoint(models.Model):
    """A URL that receives signed events. ``events`` lists the event types it wants;
    ``namespaces`` the user_ids it hears about (empty = every namespace)."""

    url = models.URLField(max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    secret = models.CharField(max_length=80, default=new_secret)
    events = models.JSONField(default=list)
    namespaces = models.JSONField(default=list, blank=True)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.url

    def wants(self, event_type: str, namespace: str | None) -> bool:
        """Whether this endpoint subscribes to ``event_type`` in ``namespace`` (events of
        no namespace, e.g. a global job, reach only endpoints without a namespace filter)."""
        if not self.active or event_type not in self.events:
            return False
        return not self.namespaces or namespace in self.namespaces


class WebhookEvent(models.Model):
    """One event in the outbox, written in the transaction of the change it reports."""

    event_id = models.CharField(max_length=40, unique=True, default=new_event_id)
    type = models.CharField(max_length=40)
    namespace = models.CharField(max_length=128, blank=True)  # "" = no namespace
    memory_id = models.CharField(max_length=20, blank=True, db_index=True)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{self.type} {self.event_id}"

    def body(self) -> dict:
        """The JSON a receiver gets (see events.py)."""
        return {"id": self.event_id, "type": self.type,
                "created_at": self.created_at.isoformat(), "namespace": self.namespace or None,
                "data": self.payload}


class WebhookDelivery(models.Model):
    """One event for one endpoint: its attempts so far and how the last one went.

    ``attempt_log``: every attempt, oldest first, ``[{"at": ISO 8601, "status_code": int |
    None, "error": str ("" when delivered)}]``, at most ``ATTEMPT_LOG_MAX`` (the newest), so
    the errors before a success stay readable."""

    ATTEMPT_LOG_MAX = 20

    PENDING, DELIVERED, FAILED, CANCELLED = "pending", "delivered", "failed", "cancelled"
    STATUSES = [(s, s) for s in (PENDING, DELIVERED, FAILED, CANCELLED)]

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE,
                                 related_name="deliveries")
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE,
                              related_name="deliveries")
    status = models.CharField(max_length=12, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    attempt_log = models.JSONField(default=list, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(fields=["endpoint", "event"],
                                               name="webhook_delivery_once")]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self):
        return f"{self.event_id} -> {self.endpoint_id}: {self.status}"

    def attempt_rows(self) -> list[dict]:
        """``attempt_log`` with ``at`` as an aware datetime (for the console's page)."""
        return [{**a, "at": dt.datetime.fromisoformat(a["at"])} for a in self.attempt_log]
