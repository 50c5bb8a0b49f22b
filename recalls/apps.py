from django.apps import AppConfig


class RecallsConfig(AppConfig):
    """The recall log: what each recall answered, and the feedback on its results."""

    name = "recalls"
    default_auto_field = "django.db.models.BigAutoField"
