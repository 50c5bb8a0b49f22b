from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    """Thin adapters over services and selectors: MCP, webhooks, metrics."""

    name = "integrations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from integrations.metrics import receivers

        receivers.connect()
