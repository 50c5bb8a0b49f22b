"""The one cursor codec of every list (the API's, the MCP tools', the readers'): a keyset
cursor holds the sort key of the last item served, as URL-safe base64 of a JSON list.

Cursors are opaque to clients and never trusted: ``decode_cursor`` checks the list's length
and each element's type against what the list asked for, so a tampered cursor (``[null,
null]``, a number where a date was, nested lists, bad base64) is an InvalidInput naming
``cursor`` (a 400, or an MCP tool error), never a query built from the wrong types.
"""

import base64
import datetime as dt
import json
import math
from collections.abc import Sequence

from memories.errors import InvalidInput

# Longer than any key a list gives out (a judgment's query of 1000 characters, as UTF-8 in
# base64, is about 5,400): refused before any decoding.
CURSOR_MAX_CHARS = 8192

NOT_OURS = "cursor is not a cursor this list gave out"


class TIME:  # noqa: N801 - a kind of ``decode_cursor``, as ``str`` and ``int`` are
    """The kind of a cursor's moment: ISO 8601 text (as ``encode_cursor`` writes a
    datetime), decoded to an aware datetime in UTC; text that is no moment, or one outside
    years 1-9999 once in UTC (``9999-12-31T23:59:59-14:00``), is not a cursor of ours."""


def clean_limit(limit, *, default: int, maximum: int) -> int:
    """``limit`` as an int in 1..maximum (None = ``default``); InvalidInput names ``limit``."""
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be 1..{maximum}", field="limit")
    return limit


def encode_cursor(values: Sequence) -> str:
    """The cursor of a sort key (str, int, float or None values; datetimes as ISO 8601)."""
    raw = json.dumps(list(values), separators=(",", ":"), ensure_ascii=False,
                     default=str).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor, kinds: Sequence[type | tuple[type, ...]]) -> list:
    """The sort key a cursor holds, one value per entry of ``kinds`` (a type, or a tuple of
    types: ``(str, type(None))`` for a nullable text key; ``bool`` is never an int; ``TIME``
    for a moment, answered as an aware datetime in UTC).

    Raises InvalidInput (field ``cursor``) for anything else."""
    values = None
    if isinstance(cursor, str) and len(cursor) <= CURSOR_MAX_CHARS:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            values = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        except (ValueError, UnicodeError, RecursionError):
            values = None
    if not isinstance(values, list) or len(values) != len(kinds):
        raise InvalidInput(NOT_OURS, field="cursor")
    out = []
    for value, kind in zip(values, kinds, strict=True):
        if kind is TIME:
            value = _moment(value)
            ours = value is not None
        else:
            ours = isinstance(value, kind) and _storable(value)
        if not ours:
            raise InvalidInput(NOT_OURS, field="cursor")
        out.append(value)
    return out


def _moment(value) -> dt.datetime | None:
    """``value`` (ISO 8601 text; naive is UTC) as an aware datetime in UTC, or None."""
    if not isinstance(value, str) or not _storable(value):
        return None
    try:
        moment = dt.datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC)
    except (ValueError, OverflowError):
        return None


def _storable(value) -> bool:
    """Whether every database can compare ``value`` with a column: no bool, no integer
    beyond 64 bits, no NaN or infinity, no NUL or lone surrogate in text."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return False
        return "\x00" not in value
    return value is None
