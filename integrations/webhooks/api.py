"""/webhooks: register endpoints, read their delivery log, send a test event (admin, and
a token without namespace restriction: an endpoint is a global setting).

Lists page as every API list does (``api.pagination``): ``?cursor=&limit=`` (1..500) → items
+ ``next_cursor`` (null on the last page).
"""

from __future__ import annotations

from ninja import Router, Status
from pydantic import Field

from accounts.roles import require_role
from api.core import Strict, require_every_agent, require_namespace
from api.pagination import cursor_page
from api.schemas import ONE, READ, WRITE, errors, page_limit
from integrations.webhooks import endpoints, outbox
from integrations.webhooks.api_schemas import (
    DeliveryPageOut,
    DeliveryStatus,
    EndpointOut,
    EndpointPageOut,
    TestEventOut,
)
from integrations.webhooks.models import WebhookDelivery, WebhookEndpoint
from memories.errors import InvalidInput, NotFound

router = Router(tags=["webhooks"])

PAGE_MAX = 500  # a delivery carries its attempt log


class EndpointIn(Strict):
    url: str = Field(max_length=2000)
    events: list[str]
    namespaces: list[str] = Field(default_factory=list)
    description: str = Field(default="", max_length=200)


class EndpointPatch(Strict):
    url: str | None = Field(default=None, max_length=2000)
    events: list[str] | None = None
    namespaces: list[str] | None = None
    description: str | None = Field(default=None, max_length=200)
    active: bool | None = None


def _iso(value):
    return value.isoformat() if value else None


def endpoint_out(e: WebhookEndpoint, *, secret: bool = False) -> dict:
    out = {"id": e.pk, "url": e.url, "description": e.description, "events": e.events,
           "namespaces": e.namespaces, "active": e.active,
           "created_at": _iso(e.created_at), "updated_at": _iso(e.updated_at)}
    if secret:
        out["secret"] = e.secret
    return out


def delivery_out(d: WebhookDelivery) -> dict:
    return {"id": d.pk, "event_id": d.event.event_id, "type": d.event.type,
            "namespace": d.event.namespace, "status": d.status, "attempts": d.attempts,
            "last_status_code": d.last_status_code, "last_error": d.last_error,
            "attempt_log": d.attempt_log, "last_attempt_at": _iso(d.last_attempt_at),
            "next_attempt_at": _iso(d.next_attempt_at), "delivered_at": _iso(d.delivered_at),
            "created_at": _iso(d.created_at)}


def _admin(request):
    """Webhooks deliver every namespace's and every agent's events: refused (403) to a token
    restricted to namespaces or to agents."""
    require_role(request.user, "admin")
    require_namespace(request, None)
    require_every_agent(request, "a webhook")


def _endpoint(endpoint_id: int) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id).first()
    if endpoint is None:
        raise NotFound(f"webhook {endpoint_id} not found", field="webhook_id")
    return endpoint


def _page(rows, cursor: str | None, limit: int, *, ascending: bool):
    """Keyset page over ``rows`` by primary key: (items, next_cursor)."""
    return cursor_page(rows, order=("pk",) if ascending else ("-pk",), cursor=cursor,
                       limit=limit, maximum=PAGE_MAX)


@router.get("/webhooks", response={200: EndpointPageOut, **errors(*READ)}, exclude_unset=True)
def list_webhooks(request, cursor: str | None = None, limit: int = page_limit(100, PAGE_MAX)):
    _admin(request)
    items, next_cursor = _page(WebhookEndpoint.objects.all(), cursor, limit, ascending=True)
    return {"webhooks": [endpoint_out(e) for e in items], "next_cursor": next_cursor}


@router.post("/webhooks", response={201: EndpointOut, **errors(*WRITE)}, exclude_unset=True)
def create_webhook(request, payload: EndpointIn):
    """201 the endpoint with its signing ``secret``."""
    _admin(request)
    endpoint = endpoints.endpoint_create(actor=request.user, **payload.model_dump())
    return Status(201, endpoint_out(endpoint, secret=True))


@router.get("/webhooks/{webhook_id}", response={200: EndpointOut, **errors(*ONE)},
            exclude_unset=True)
def get_webhook(request, webhook_id: int):
    _admin(request)
    return endpoint_out(_endpoint(webhook_id), secret=True)


@router.patch("/webhooks/{webhook_id}", response={200: EndpointOut, **errors(*WRITE, 404)},
              exclude_unset=True)
def patch_webhook(request, webhook_id: int, payload: EndpointPatch):
    _admin(request)
    endpoint = endpoints.endpoint_update(actor=request.user, endpoint=_endpoint(webhook_id),
                                         **payload.model_dump(exclude_unset=True))
    return endpoint_out(endpoint)


@router.delete("/webhooks/{webhook_id}", response={204: None, **errors(*ONE)})
def delete_webhook(request, webhook_id: int):
    _admin(request)
    endpoints.endpoint_delete(actor=request.user, endpoint=_endpoint(webhook_id))
    return Status(204, None)


@router.post("/webhooks/{webhook_id}/rotate-secret",
             response={200: EndpointOut, **errors(*ONE, 413)}, exclude_unset=True)
def rotate_secret(request, webhook_id: int):
    """A new signing secret (the old one stops working at once)."""
    _admin(request)
    endpoint = endpoints.endpoint_rotate_secret(actor=request.user,
                                                endpoint=_endpoint(webhook_id))
    return endpoint_out(endpoint, secret=True)


@router.post("/webhooks/{webhook_id}/test", response={202: TestEventOut, **errors(*ONE, 413)})
def send_test(request, webhook_id: int):
    """Queue a ``webhook.test`` event for this endpoint: 202 ``{"event_id"}``."""
    _admin(request)
    event = outbox.outbox_test_event(_endpoint(webhook_id), actor=request.user)
    return Status(202, {"event_id": event.event_id})


@router.get("/webhooks/{webhook_id}/deliveries",
            response={200: DeliveryPageOut, **errors(*ONE)})
def list_deliveries(request, webhook_id: int, status: DeliveryStatus | None = None,
                    cursor: str | None = None, limit: int = page_limit(100, PAGE_MAX)):
    """The endpoint's delivery log, newest first; ``status`` pending / delivered / failed /
    cancelled."""
    _admin(request)
    rows = _endpoint(webhook_id).deliveries.select_related("event")
    if status is not None:
        if status not in dict(WebhookDelivery.STATUSES):
            raise InvalidInput("status must be pending, delivered, failed or cancelled",
                               field="status")
        rows = rows.filter(status=status)
    items, next_cursor = _page(rows, cursor, limit, ascending=False)
    return {"deliveries": [delivery_out(d) for d in items], "next_cursor": next_cursor}
