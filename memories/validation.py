"""Input rules shared by every write path (API, pages, imports, jobs)."""

import datetime as dt
import json
import math
import re

from django.utils.dateparse import parse_datetime

from memories.errors import InvalidInput, TooLarge
from memories.json_input import json_depth, too_deep
from memories.text_check import FREE, LINE, STORABLE, TextRefused, check_text

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
    clean_text(value, field, kind=STORABLE)
    return value


def clean_text(value, field: str, *, kind: str = FREE):
    """The one text check of every writer (``memories.text_check``): ``value`` (a string, or
    dicts and lists of them) holds no NUL, no lone surrogate and no control character
    ``kind`` does not allow (``FREE`` text keeps tab and line breaks, ``LINE`` text none).
    Returns ``value``; raises InvalidInput naming the innermost field."""
    try:
        check_text(value, field, kind=kind)
    except TextRefused as exc:
        raise InvalidInput(exc.message, field=exc.field) from None
    return value


def clean_json_object(value, field: str, *, max_depth: int, max_bytes: int) -> dict:
    """A free-form JSON object (metadata): at most ``max_depth`` levels deep and
    ``max_bytes`` encoded, plain JSON (no NaN), keys single-line text and string values free
    text. Raises InvalidInput (TooLarge over ``max_bytes``) naming ``field``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"{field} must be a JSON object", field=field)
    if json_depth(value) > max_depth:
        raise too_deep(field, max_depth, field=field)
    clean_text(value, field)
    try:
        encoded = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{field} must be plain JSON (no NaN)", field=field) from exc
    if len(encoded.encode()) > max_bytes:
        raise TooLarge(f"{field} is over {max_bytes} bytes", field=field, limit=max_bytes)
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
        clean_text(item, field, kind=LINE)
        out.append(item.strip())
    return out


def check_storable_text(value, field: str = "") -> None:
    """Refuse text no store can hold: a lone surrogate (a JSON ``"\\ud800"``, which no UTF-8
    can hold) or a NUL character (PostgreSQL refuses it in text; SQLite would keep it
    silently), anywhere in ``value`` (dicts and lists walked, any depth). The request
    middleware applies it to whole bodies; writers use :func:`clean_text`, which also
    refuses control characters. Raises InvalidInput naming the innermost field."""
    clean_text(value, field, kind=STORABLE)


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
