"""One way of paging every API list: ``?cursor=&limit=`` → the items and ``"next_cursor"``
(null on the last page).

Keyset pagination (the seek method): the cursor holds the sort key of the last item served
(``memories.cursors``, the codec of every list: opaque to clients, never trusted, a cursor
that does not decode to the key's shape and types is a 400 naming ``cursor``). A page after
it is a range read on the ordering's index, whatever the page number, and rows added or
removed before it never make a page skip or repeat one (OFFSET would do both, and read every
skipped row).
"""

from collections.abc import Sequence

from django.db import models
from django.db.models import Q, QuerySet

from memories import cursors
from memories.cursors import decode_cursor, encode_cursor
from memories.errors import InvalidInput

__all__ = ["clean_limit", "cursor_page", "decode_cursor", "encode_cursor"]

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


def clean_limit(limit, *, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    """``limit`` as an int in 1..maximum (None = ``default``); InvalidInput names ``limit``."""
    return cursors.clean_limit(limit, default=default, maximum=maximum)


def _field(model, name: str):
    return model._meta.pk if name == "pk" else model._meta.get_field(name)


def _kind(field) -> type | tuple[type, ...]:
    """The JSON type a field's cursor value has: numbers for integer keys, ISO 8601 text for
    moments (``cursors.TIME``), text for the rest."""
    if isinstance(field, models.IntegerField):  # AutoField and BigAutoField are ones
        return int
    if isinstance(field, models.DateTimeField):
        return cursors.TIME  # a moment in years 1-9999 once in UTC, as the database keeps
    if isinstance(field, models.FloatField):
        return (int, float)
    return str


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
        raw = decode_cursor(cursor, [_kind(_field(model, t.lstrip("-"))) for t in order])
        try:
            values = [_field(model, t.lstrip("-")).to_python(v) for t, v in zip(order, raw,
                                                                                 strict=True)]
        except Exception as exc:  # noqa: BLE001 - any field's own parse error
            raise InvalidInput(cursors.NOT_OURS, field="cursor") from exc
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
