"""THE writer of the outbox (WebhookEvent) and the delivery log (WebhookDelivery).

The memory, session and job writers call :func:`outbox_record` inside their own
``transaction.atomic()``: the event commits with the change it reports or not at all (a
rolled-back write sends nothing; a committed one is never lost). One delivery row is
written per subscribed endpoint, and each is enqueued for the worker only once the
transaction commits. Delivery is at least once: a worker that dies mid-attempt, or an enqueue
Redis refused after the commit (the write still answers 2xx), leaves the row ``pending``, and
:func:`outbox_sweep` enqueues such rows again.

This module imports no writer, view, job or API module (the job is enqueued by its dotted
path), so every writer may call it.
"""

from __future__ import annotations

import datetime as dt
import functools
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from integrations.webhooks import events
from integrations.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from memories import queue as job_queue
from memories.queue import after_commit

DELIVER_JOB = "integrations.webhooks.deliver.deliver_job"
QUEUE = "default"


def max_attempts() -> int:
    return int(getattr(settings, "WEBHOOKS_MAX_ATTEMPTS", 8))


def retry_intervals() -> list[int]:
    """Seconds before each retry: ``base * 4**n`` capped at 6 h (with the defaults 10 s,
    40 s, 160 s, ~11 min, ~43 min, ~2.8 h, 6 h: a receiver may be down for ~10 h)."""
    base = float(getattr(settings, "WEBHOOKS_RETRY_BASE_SECONDS", 10))
    return [int(min(6 * 3600, base * 4 ** n)) for n in range(max_attempts() - 1)]


def _enqueue(delivery_ids: list[int]) -> None:
    from rq import Retry

    queue = job_queue.get_queue(QUEUE)
    intervals = retry_intervals()
    for delivery_id in delivery_ids:
        queue.enqueue(DELIVER_JOB, delivery_id, job_timeout=120, result_ttl=3600,
                      retry=Retry(max=len(intervals), interval=intervals) if intervals else None)


def _record(type_: str, namespace: str | None, payload: dict, endpoints, memory_id=None):
    event = WebhookEvent.objects.create(type=type_, namespace=namespace or "",
                                        payload=payload, memory_id=memory_id or "")
    # bulk_create is fine here: nothing listens to signals of these rows.
    rows = WebhookDelivery.objects.bulk_create(
        [WebhookDelivery(endpoint=e, event=event) for e in endpoints])
    after_commit(partial(_enqueue, [r.pk for r in rows]), what="webhook deliveries")
    return event


@functools.cache
def _any_active_sql() -> str:
    qn = connection.ops.quote_name
    return (f"SELECT 1 FROM {qn(WebhookEndpoint._meta.db_table)} "
            f"WHERE {qn(WebhookEndpoint._meta.get_field('active').column)} LIMIT 1")


def _any_active_endpoint() -> bool:
    """Whether any endpoint is active, by one plain statement: most installations have
    none, and the ORM query of the endpoints, compiled on every write, was a measurable share
    of a create's CPU. Read in the caller's transaction, as the list is."""
    with connection.cursor() as cursor:
        cursor.execute(_any_active_sql())
        return cursor.fetchone() is not None


def outbox_record(*, type: str, namespace: str | None, data: dict,
                  memory_id: str | None = None) -> WebhookEvent | None:
    """Write event ``type`` (one of events.EVENT_TYPES) to the outbox, with a delivery for
    every active endpoint subscribed to it in ``namespace``; None when no endpoint is (no
    row at all). Call it inside the transaction of the change."""
    if not _any_active_endpoint():
        return None
    wanted = [e for e in WebhookEndpoint.objects.filter(active=True)
              if e.wants(type, namespace)]
    if not wanted:
        return None
    return _record(type, namespace, data, wanted, memory_id)


# What kind of history version is which event.
KIND_EVENTS = {"create": "memory.created", "promote": "memory.created",
               "consolidate": "memory.created", "edit": "memory.updated",
               "importance": "memory.updated", "forget": "memory.forgotten",
               "archive": "memory.forgotten", "restore": "memory.restored",
               "rollback": "memory.rolled_back", "supersede": "memory.superseded",
               "invalidate": "memory.invalidated", "revalidate": "memory.revalidated"}


def outbox_memory_event(memory, *, kind: str, actor=None, reason: str = ""):
    """:func:`outbox_record` of the event for a new version of ``kind`` (a ChangeKind
    value) of ``memory`` (a Memory row)."""
    # A kind added later reports as an update rather than failing the write.
    return outbox_record(type=KIND_EVENTS.get(kind, "memory.updated"), namespace=memory.user_id,
                         memory_id=memory.memory_id,
                         data=events.memory_data(memory, actor=actor, reason=reason))


def outbox_memories_created(memories, *, actor=None, reason: str = "") -> int:
    """``memory.created`` for each of ``memories`` (a bulk import), reading the endpoints
    once. Returns the number of events written."""
    subscribed = list(WebhookEndpoint.objects.filter(active=True))
    written = 0
    for memory in memories:
        wanted = [e for e in subscribed if e.wants("memory.created", memory.user_id)]
        if wanted:
            _record("memory.created", memory.user_id,
                    events.memory_data(memory, actor=actor, reason=reason), wanted,
                    memory.memory_id)
            written += 1
    return written


def outbox_memory_purged(*, memory_id: str, user_id: str, conversation_id, actor=None,
                         reason: str = ""):
    """The ``memory.purged`` event, which holds ids only. Write it after the purge
    scrubbed the memory from the outbox (:func:`outbox_purge_memories`), which would cancel
    its deliveries."""
    return outbox_record(type="memory.purged", namespace=user_id, memory_id=memory_id,
                         data=events.purged_data(memory_id=memory_id, user_id=user_id,
                                                 conversation_id=conversation_id,
                                                 actor=actor, reason=reason))


def outbox_test_event(endpoint: WebhookEndpoint, *, actor=None) -> WebhookEvent:
    """A ``webhook.test`` event for ``endpoint`` alone (the "Send test event" button)."""
    who = getattr(actor, "username", None)
    with transaction.atomic():
        return _record(events.TEST_EVENT, None,
                       {"message": "Test event from Memory Console", "actor": who}, [endpoint])


def outbox_purge_memories(*, memory_ids) -> int:
    """Remove purged memories' content from the outbox and the delivery log: their events
    keep only ids, pending deliveries of them are cancelled (their content is gone), and
    delivery errors (the last one and the attempt log) are cleared. Call it inside the
    purge's transaction (``memories.services.purge.memories_erase``). Returns the number of
    events scrubbed."""
    memory_ids = list(memory_ids)
    scrubbed = 0
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start:start + 500]
        for event in WebhookEvent.objects.filter(memory_id__in=chunk).exclude(
                type="memory.purged"):
            event.payload = events.scrub(event.payload)
            event.save(update_fields=["payload"])
            scrubbed += 1
        deliveries = WebhookDelivery.objects.filter(event__memory_id__in=chunk)
        deliveries.filter(status=WebhookDelivery.PENDING).update(
            status=WebhookDelivery.CANCELLED, next_attempt_at=None)
        deliveries.update(last_error="", attempt_log=[])
    return scrubbed


def delivery_record(*, delivery_id: int, ok: bool, status_code: int | None, error: str,
                    final: bool, retry_in: float | None) -> None:
    """The outcome of one attempt: delivered, failed for good (``final``), or pending with
    the next try ``retry_in`` seconds from now; the attempt joins the row's
    ``attempt_log``. A cancelled row stays cancelled."""
    now = timezone.now()
    fields = {"last_status_code": status_code, "last_error": error[:2000],
              "last_attempt_at": now}
    if ok:
        fields.update(status=WebhookDelivery.DELIVERED, delivered_at=now, next_attempt_at=None)
    elif final:
        fields.update(status=WebhookDelivery.FAILED, next_attempt_at=None)
    else:
        fields["next_attempt_at"] = now + dt.timedelta(seconds=retry_in or 0)
    with transaction.atomic():
        row = WebhookDelivery.objects.select_for_update().filter(pk=delivery_id).first()
        if row is None or row.status == WebhookDelivery.CANCELLED:
            return
        row.attempts += 1
        for name, value in fields.items():
            setattr(row, name, value)
        row.attempt_log = [*row.attempt_log, {
            "at": now.isoformat(), "status_code": status_code, "error": error[:2000],
        }][-WebhookDelivery.ATTEMPT_LOG_MAX:]
        row.save()


def delivery_retry(delivery: WebhookDelivery) -> None:
    """Send a failed delivery again from its first attempt (the console's Retry button)."""
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=WebhookDelivery.PENDING, next_attempt_at=None)
        after_commit(partial(_enqueue, [delivery.pk]), what="webhook delivery")


def outbox_sweep(*, older_than_seconds: int = 3600) -> int:
    """Enqueue again pending deliveries whose last attempt (or creation) is older than
    ``older_than_seconds`` and whose retry is not scheduled later: the job of a worker that
    died mid-attempt, or an enqueue lost to a crash right after the commit. Returns how many."""
    cutoff = timezone.now() - dt.timedelta(seconds=older_than_seconds)
    stale = WebhookDelivery.objects.filter(status=WebhookDelivery.PENDING,
                                           created_at__lt=cutoff)
    stale = stale.exclude(next_attempt_at__gt=timezone.now()).exclude(
        last_attempt_at__gt=cutoff)
    ids = list(stale.values_list("pk", flat=True)[:1000])
    if ids:
        _enqueue(ids)
    return len(ids)
