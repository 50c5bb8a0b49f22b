from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """Reindex, drift and reconcile, forgetting policy, backup, jobs, health."""

    name = "operations"
    default_auto_field = "django.db.models.BigAutoField"
