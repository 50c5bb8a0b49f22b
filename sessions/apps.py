from django.apps import AppConfig


class SessionsConfig(AppConfig):
    """Agent sessions; label ``agent_sessions`` because Django's own sessions app has ``sessions``."""

    name = "sessions"
    label = "agent_sessions"
    default_auto_field = "django.db.models.BigAutoField"
