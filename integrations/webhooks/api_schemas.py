"""The typed answers of ``/webhooks`` (``integrations.webhooks.api``)."""

from typing import Any, Literal

from pydantic import Field

from api.schemas import Iso, Out

DeliveryStatus = Literal["pending", "delivered", "failed", "cancelled"]


class EndpointOut(Out):
    """A webhook endpoint: the events it takes and the namespaces it filters on (empty:
    every one). ``secret`` (signing) only on create, read and rotate."""

    id: int
    url: str
    description: str
    events: list[str]
    namespaces: list[str]
    active: bool
    created_at: Iso | None
    updated_at: Iso | None
    secret: str = Field(default=None)


class EndpointPageOut(Out):
    webhooks: list[EndpointOut]
    next_cursor: str | None


class TestEventOut(Out):
    event_id: str


class DeliveryOut(Out):
    """One event's delivery to the endpoint: its state, attempts so far (``attempt_log``:
    each ``{"at", "status_code", "error"}``, oldest first) and when it is tried next."""

    id: int
    event_id: str
    type: str
    namespace: str | None
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    last_error: str
    attempt_log: list[dict[str, Any]]
    last_attempt_at: Iso | None
    next_attempt_at: Iso | None
    delivered_at: Iso | None
    created_at: Iso | None


class DeliveryPageOut(Out):
    deliveries: list[DeliveryOut]
    next_cursor: str | None
