"""Models of the integrations app: the webhook endpoints, outbox and delivery log live in
``integrations/webhooks/models.py`` (imported here so Django registers them)."""

from integrations.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

__all__ = ["WebhookDelivery", "WebhookEndpoint", "WebhookEvent"]
