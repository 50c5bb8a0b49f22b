"""Input rules shared by every write path (API, pages, imports, jobs)."""

import datetime as dt
import math
import re
from collections.abc import Mapping

from django.utils.dateparse import parse_datetime

from memories.errors import InvalidInput

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MEMORY_ID_RE = re.compile(r"^mem_[0-9a-f]{16}$")


def clean_identifier(value, field: str, *, required: bool = True) -> str | None:
    """An id (``user_id``, ``conversation_id``, ``session_id``, ``agent_id``): any string of
    1-128 characters without control characters or leading/trailing white space.

    Raises InvalidInput naming ``field`` otherwise; returns None for an absent optional id.
    """
    if value is None:
        if required:
            raise InvalidInput(f"{field} is required", field=field)
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    if not 1 <= len(value) <= 128:
        raise InvalidInput(f"{field} must be 1-128 characters", field=field)
    if value != value.strip():
        raise InvalidInput(f"{field} must not start or end with white space", field=field)
    if _CONTROL.search(value):
        raise InvalidInput(f"{field} must not contain control characters", field=field)
    return value


def clean_unit_float(value, field: str) -> float:
    """A finite number in 0..1 (importance, weights)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{field} must be a number", field=field)
    value = float(value)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{field} must be between 0 and 1", field=field)
    return value


def clean_string_list(value, field: str, *, max_items: int = 50, max_len: int = 64) -> list[str]:
    if not isinstance(value, list | tuple):
        raise InvalidInput(f"{field} must be a list of strings", field=field)
    if len(value) > max_items:
        raise InvalidInput(f"{field} takes at most {max_items} items", field=field)
    out = []
    for item in value:
        if not isinstance(item, str) or not item.strip() or len(item) > max_len:
            raise InvalidInput(
                f"{field} items must be non-blank strings of at most {max_len} characters",
                field=field,
            )
        out.append(item.strip())
    return out


def check_storable_text(value, field: str = "") -> None:
    """Refuse text a database cannot store: a lone surrogate (a JSON ``"\\ud800"``, which no
    UTF-8 can hold) anywhere, or a NUL character (PostgreSQL refuses it in text; SQLite would
    keep it silently). Walks dicts and lists; raises InvalidInput naming the innermost field.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"{field or 'value'} is not valid Unicode text",
                               field=field or None) from None
        if "\x00" in value:
            raise InvalidInput(f"{field or 'value'} must not contain NUL characters",
                               field=field or None)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_storable_text(key, field)
            check_storable_text(item, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_storable_text(item, f"{field}.{index}" if field else str(index))


def parse_iso_datetime(value, field: str) -> dt.datetime:
    """An aware datetime from ISO 8601 text (naive is taken as UTC). Raises InvalidInput
    naming ``field`` for text that is not a date, an impossible date or offset, or a moment
    outside years 1-9999 in UTC."""
    parsed = None
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value.strip())
        except ValueError:
            parsed = None
    if parsed is None:
        raise InvalidInput(f"{field} must be an ISO 8601 date and time", field=field)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    try:
        return parsed.astimezone(dt.UTC)
    except OverflowError:
        raise InvalidInput(f"{field} is out of range", field=field) from None
