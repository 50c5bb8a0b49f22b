"""The delivery job (run by the rq worker): one signed POST of one event to one endpoint.

A non-2xx answer or a connection error raises :class:`DeliveryFailed`, and rq's ``Retry``
(set at enqueue, intervals from ``outbox.retry_intervals``) runs the job again later; the
last allowed attempt marks the delivery ``failed``. Redirects are not followed (one could
point inside our network). The URL is checked again before every attempt: DNS may have
changed since the endpoint was registered.
"""

from __future__ import annotations

import json
import time

import httpx
from django.conf import settings

from integrations.webhooks import outbox, signing
from integrations.webhooks.addresses import UnsafeURL, check_url
from integrations.webhooks.models import WebhookDelivery

USER_AGENT = "MemoryConsole-Webhooks/1"


class DeliveryFailed(Exception):
    """This attempt failed; rq retries the job if attempts remain."""


def body_bytes(delivery: WebhookDelivery) -> bytes:
    return json.dumps(delivery.event.body(), ensure_ascii=False, separators=(",", ":"),
                      sort_keys=True).encode()


def _post(delivery: WebhookDelivery) -> tuple[int | None, str]:
    """One attempt: (HTTP status or None, error text or "")."""
    endpoint = delivery.endpoint
    try:
        check_url(endpoint.url, allow_private=getattr(settings, "WEBHOOKS_ALLOW_PRIVATE", False))
    except UnsafeURL as exc:
        return None, f"refused: {exc}"
    body = body_bytes(delivery)
    headers = {
        "Content-Type": "application/json", "User-Agent": USER_AGENT,
        "X-Memory-Console-Event": delivery.event.type,
        "X-Memory-Console-Event-Id": delivery.event.event_id,
        "X-Memory-Console-Delivery": str(delivery.pk),
        signing.HEADER: signing.sign(endpoint.secret, body),
    }
    timeout = float(getattr(settings, "WEBHOOKS_TIMEOUT_SECONDS", 10))
    try:
        response = httpx.post(endpoint.url, content=body, headers=headers, timeout=timeout,
                              follow_redirects=False)
    except Exception as exc:  # noqa: BLE001 - not only httpx.HTTPError: InvalidURL and the
        # idna codec's UnicodeError are not. Any failure of building or sending the request is
        # this attempt's recorded error; one that escaped would leave the row pending, with no
        # error, for the sweep to queue again every hour. (check_url refuses, for good, what
        # httpx cannot parse.)
        return None, f"{type(exc).__name__}: {exc}"[:500]
    if 200 <= response.status_code < 300:
        return response.status_code, ""
    return response.status_code, f"HTTP {response.status_code}"


def deliver_job(delivery_id: int) -> str:
    """Attempt delivery ``delivery_id``: ``"delivered"``, ``"failed"`` (no attempts left),
    ``"skipped"`` (already delivered, cancelled or gone); raises DeliveryFailed to retry."""
    from rq import get_current_job

    delivery = (WebhookDelivery.objects.select_related("endpoint", "event")
                .filter(pk=delivery_id).first())
    job = get_current_job()
    if delivery is None or delivery.status != WebhookDelivery.PENDING:
        if job is not None and job.meta.pop("webhook", None) is not None:
            job.save_meta()  # no attempt now: nothing for the worker to count
        return "skipped"
    started = time.perf_counter()
    status, error = _post(delivery)
    seconds = time.perf_counter() - started
    ok = not error
    retries_left = (job.retries_left or 0) if job is not None else 0
    refused = error.startswith("refused:")  # a refused URL will not get better by waiting
    final = ok or refused or retries_left <= 0
    intervals = outbox.retry_intervals()
    used = len(intervals) - retries_left
    retry_in = intervals[min(used, len(intervals) - 1)] if intervals and not final else None
    outbox.delivery_record(delivery_id=delivery_id, ok=ok, status_code=status, error=error,
                           final=final, retry_in=retry_in)
    if job is not None:
        # Counted by the worker's own process (integrations/metrics/worker.py): metrics
        # counted here, in the forked work horse, would die with it.
        job.meta["webhook"] = {"event": delivery.event.type, "seconds": seconds,
                               "outcome": "delivered" if ok else "gave_up" if final
                               else "failed"}
        job.save_meta()
    if ok:
        return "delivered"
    if final:
        return "failed"
    raise DeliveryFailed(error)
