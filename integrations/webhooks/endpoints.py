"""THE writer of WebhookEndpoint rows: register, change, rotate the secret, delete.

Raises ``InvalidInput`` (400, naming the field) for a URL that is not http(s) or reaches a
private address (unless ``WEBHOOKS_ALLOW_PRIVATE``), an unknown event type or a bad
namespace. Every change is audited (action ``webhook.*``, target ``webhook:<id>``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from integrations.webhooks.addresses import UnsafeURL, check_url
from integrations.webhooks.events import EVENT_TYPES
from integrations.webhooks.models import WebhookEndpoint, new_secret
from memories.errors import InvalidInput
from memories.services.audit import audit_record
from memories.validation import clean_identifier

MAX_NAMESPACES = 100


def clean_url(url: str) -> str:
    url = (url or "").strip()
    if not url:
        raise InvalidInput("url is required", field="url")
    if len(url) > 2000:
        raise InvalidInput("url is longer than 2000 characters", field="url")
    try:
        return check_url(url, allow_private=getattr(settings, "WEBHOOKS_ALLOW_PRIVATE", False))
    except UnsafeURL as exc:
        raise InvalidInput(str(exc), field="url") from None


def clean_events(values) -> list[str]:
    if not isinstance(values, list | tuple) or not values:
        raise InvalidInput(f"events must list one or more of {', '.join(EVENT_TYPES)}",
                           field="events")
    unknown = [v for v in values if v not in EVENT_TYPES]
    if unknown:
        raise InvalidInput(f"unknown event {unknown[0]!r}; choose from {', '.join(EVENT_TYPES)}",
                           field="events")
    return [e for e in EVENT_TYPES if e in values]  # canonical order, no repeats


def clean_namespaces(values) -> list[str]:
    values = list(values or [])
    if len(values) > MAX_NAMESPACES:
        raise InvalidInput(f"at most {MAX_NAMESPACES} namespaces", field="namespaces")
    return sorted({clean_identifier(v, "namespaces") for v in values})


def endpoint_create(*, actor, url: str, events, namespaces=None,
                    description: str = "") -> WebhookEndpoint:
    """A new active endpoint with a fresh signing secret (``whsec_`` + 48 hex)."""
    fields = {"url": clean_url(url), "events": clean_events(events),
              "namespaces": clean_namespaces(namespaces),
              "description": (description or "").strip()[:200]}
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.create(created_by=_user(actor), **fields)
        audit_record(actor=actor, action="webhook.create", target=f"webhook:{endpoint.pk}",
                     data={"url": endpoint.url, "events": endpoint.events})
    return endpoint


def endpoint_update(*, actor, endpoint: WebhookEndpoint, **changes) -> WebhookEndpoint:
    """Change any of ``url``, ``events``, ``namespaces``, ``description``, ``active``."""
    cleaners = {"url": clean_url, "events": clean_events, "namespaces": clean_namespaces,
                "description": lambda v: (v or "").strip()[:200], "active": bool}
    for name, value in changes.items():
        if name not in cleaners:
            raise InvalidInput(f"unknown field {name!r}", field=name)
        setattr(endpoint, name, cleaners[name](value))
    with transaction.atomic():
        endpoint.save()
        audit_record(actor=actor, action="webhook.update", target=f"webhook:{endpoint.pk}",
                     data={"fields": sorted(changes)})
    return endpoint


def endpoint_rotate_secret(*, actor, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    endpoint.secret = new_secret()
    with transaction.atomic():
        endpoint.save(update_fields=["secret", "updated_at"])
        audit_record(actor=actor, action="webhook.rotate_secret",
                     target=f"webhook:{endpoint.pk}")
    return endpoint


def endpoint_delete(*, actor, endpoint: WebhookEndpoint) -> None:
    """Delete the endpoint and its delivery log (events stay for other endpoints)."""
    with transaction.atomic():
        audit_record(actor=actor, action="webhook.delete", target=f"webhook:{endpoint.pk}",
                     data={"url": endpoint.url})
        endpoint.delete()


def _user(actor):
    return actor if getattr(actor, "is_authenticated", False) and actor.pk else None
