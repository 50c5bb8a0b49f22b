"""Strict readers of environment variables: a bad value is ImproperlyConfigured at start-up,
not a surprise at run time.

Read by the settings and by the gunicorn config (in the master, which loads no Django
settings: ``memory_console.encoder_preload``), so nothing here imports them.
"""

import os

from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool) -> bool:
    """Read a 1/0/true/false/yes/no variable; anything else is an error."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be 1/0/true/false, got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]
