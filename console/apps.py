from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """Pages that span capabilities, base templates, demo data."""

    name = "console"
    default_auto_field = "django.db.models.BigAutoField"
