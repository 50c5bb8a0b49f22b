from django.apps import AppConfig


class LabConfig(AppConfig):
    """The ranking lab: judgments, query sets, evaluation runs."""

    name = "lab"
    default_auto_field = "django.db.models.BigAutoField"
