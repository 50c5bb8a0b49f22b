"""Input rules shared by every write path (API, pages, imports, jobs)."""

import math
import re

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
