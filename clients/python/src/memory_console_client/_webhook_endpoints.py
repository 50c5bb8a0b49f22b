"""The webhook calls, for admins (mixed into
:class:`~memory_console_client._endpoints.Endpoints`)."""

from __future__ import annotations

from typing import Any

from . import models as m
from ._answers import _none, _one, _page
from ._http import Call, compact


class WebhookEndpoints:
    """Calls on /webhooks (see the README for what each does)."""

    def _run(self, call: Call) -> Any:  # pragma: no cover - provided by the clients
        raise NotImplementedError

    # webhooks (admin) -------------------------------------------------------------------
    def list_webhooks(self, *, cursor: str | None = None, limit: int | None = None
                      ) -> m.Page[m.Webhook]:
        return self._run(Call("GET", "/webhooks", _page("webhooks", m.Webhook),
                              params={"cursor": cursor, "limit": limit}, idempotent=True))

    def create_webhook(self, url: str, events: list[str], *,
                       namespaces: list[str] | None = None,
                       description: str | None = None) -> m.Webhook:
        """Register an endpoint; the answer carries its signing ``secret``."""
        body = compact(dict(url=url, events=events, namespaces=namespaces,
                            description=description))
        return self._run(Call("POST", "/webhooks", _one(m.Webhook), json=body))

    def get_webhook(self, webhook_id: int) -> m.Webhook:
        return self._run(Call("GET", f"/webhooks/{int(webhook_id)}", _one(m.Webhook),
                              idempotent=True))

    def update_webhook(self, webhook_id: int, **fields: Any) -> m.Webhook:
        """Change ``url``, ``events``, ``namespaces``, ``description`` or ``active``."""
        return self._run(Call("PATCH", f"/webhooks/{int(webhook_id)}", _one(m.Webhook),
                              json=fields))

    def delete_webhook(self, webhook_id: int) -> None:
        return self._run(Call("DELETE", f"/webhooks/{int(webhook_id)}", _none,
                              idempotent=True))

    def rotate_webhook_secret(self, webhook_id: int) -> m.Webhook:
        return self._run(Call("POST", f"/webhooks/{int(webhook_id)}/rotate-secret",
                              _one(m.Webhook)))

    def send_test_event(self, webhook_id: int) -> str:
        """Queue a ``webhook.test`` event for the endpoint; returns its event id."""
        return self._run(Call("POST", f"/webhooks/{int(webhook_id)}/test",
                              lambda b: b["event_id"]))

    def list_deliveries(self, webhook_id: int, *, status: str | None = None,
                        cursor: str | None = None, limit: int | None = None
                        ) -> m.Page[m.Delivery]:
        """The endpoint's delivery log, newest first."""
        return self._run(Call("GET", f"/webhooks/{int(webhook_id)}/deliveries",
                              _page("deliveries", m.Delivery),
                              params={"status": status, "cursor": cursor, "limit": limit},
                              idempotent=True))
