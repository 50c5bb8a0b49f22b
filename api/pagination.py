"""One way of paging every API list: ``?cursor=&limit=`` → the items and ``"next_cursor"``
(null on the last page).

Keyset pagination (the seek method): the cursor holds the sort key of the last item served,
as URL-safe base64 of JSON (opaque to clients, never trusted: a cursor that does not decode
to the key's shape is a 400 naming ``cursor``). A page after it is a range read on the
ordering's index, whatever the page number, and rows added or removed before it never make
a page skip or repeat one (OFFSET would do both, and read every skipped row).
"""

import base64
import json
from collections.abc import Sequence

from django.db.models import Q, QuerySet

from memories.errors import InvalidInput

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


def clean_limit(limit, *, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    """``limit`` as an int in 1..maximum (None = ``default``); InvalidInput names ``limit``."""
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be 1..{maximum}", field="limit")
    return limit


def encode_cursor(values: Sequence) -> str:
    raw = json.dumps(list(values), separators=(",", ":"), default=str).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, size: int) -> list:
    """The ``size`` values a cursor holds; InvalidInput (field ``cursor``) for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, UnicodeError):
        values = None
    if not isinstance(values, list) or len(values) != size or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in values):
        raise InvalidInput("cursor is not a cursor this list gave out", field="cursor")
    return values


def _field(model, name: str):
    return model._meta.pk if name == "pk" else model._meta.get_field(name)


def _after(model, order: Sequence[str], values: list) -> Q:
    """Rows strictly after ``values`` in ``order`` (each ``name`` or ``-name``)."""
    out = Q()
    for i, term in enumerate(order):
        name = term.lstrip("-")
        step = Q(**{f"{name}__{'lt' if term.startswith('-') else 'gt'}": values[i]})
        for prev, value in zip(order[:i], values[:i], strict=True):
            step &= Q(**{prev.lstrip("-"): value})
        out |= step
    return out


def cursor_page(rows: QuerySet, *, order: Sequence[str], cursor: str | None,
                limit: int | None, default: int = DEFAULT_LIMIT,
                maximum: int = MAX_LIMIT) -> tuple[list, str | None]:
    """One page of ``rows`` sorted by ``order`` (non-null fields ending in a unique one, e.g.
    ``("-updated_at", "pk")``): ``(items, next_cursor)``. Raises InvalidInput for a bad
    ``limit`` or ``cursor``."""
    limit = clean_limit(limit, default=default, maximum=maximum)
    model = rows.model
    rows = rows.order_by(*order)
    if cursor:
        raw = decode_cursor(cursor, len(order))
        try:
            values = [_field(model, t.lstrip("-")).to_python(v) for t, v in zip(order, raw,
                                                                                 strict=True)]
        except Exception as exc:  # noqa: BLE001 - any field's own parse error
            raise InvalidInput("cursor is not a cursor this list gave out",
                               field="cursor") from exc
        rows = rows.filter(_after(model, order, values))
    items = list(rows[:limit + 1])
    if len(items) <= limit:
        return items, None
    items = items[:limit]
    last = items[-1]
    key = [_key_value(getattr(last, "pk" if t.lstrip("-") == "pk" else _attname(model, t)))
           for t in order]
    return items, encode_cursor(key)


def _attname(model, term: str) -> str:
    return _field(model, term.lstrip("-")).attname


def _key_value(value):
    return value.isoformat() if hasattr(value, "isoformat") else value
