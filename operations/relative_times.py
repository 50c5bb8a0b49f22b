"""Times relative to the import, for a document that says ``"times": "relative"`` (the demo
fixture): its data looks alive whenever it is loaded, and short-term memories do not expire
the day after.

In such a document every date field holds an offset from the moment of the import instead
of an ISO 8601 date: a number of seconds (``-86400``) or a signed text of weeks, days,
hours, minutes and seconds (``"-3d"``, ``"-2h30m"``, ``"+1w"``). :func:`resolve_times`
returns the document with each one replaced by its ISO 8601 moment, before any other check;
a document without ``times`` (every export) is returned as it is.
"""

import datetime as dt
import re

from memories.errors import InvalidInput

_OFFSET = re.compile(r"([+-])(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_UNITS = (7 * 86400, 86400, 3600, 60, 1)
_LIMIT = 100 * 365 * 86400  # a century either way

MEMORY_DATES = ("accessed_at", "created_at", "updated_at", "expire_at", "deleted_at",
                "valid_from", "valid_until")
# (list path, date fields of each item): every date field a document may hold.
_PLACES = (
    (("memories",), MEMORY_DATES),
    (("memories", "history"), ("at", *MEMORY_DATES)),
    (("conflicts",), ("created_at", "decided_at")),
    (("sessions",), ("created_at", "updated_at")),
    (("sessions", "messages"), ("at",)),
    (("lab", "profiles"), ("updated_at",)),
    (("lab", "profiles", "versions"), ("at",)),
    (("lab", "query_sets"), ("created_at", "updated_at")),
    (("lab", "judgments"), ("created_at", "updated_at")),
    (("lab", "runs"), ("created_at",)),
    (("feedback",), ("created_at", "updated_at")),
)


def offset_seconds(value, where: str) -> int:
    """Seconds from an offset (a number, or ``"-3d4h"``). Raises InvalidInput naming
    ``where``."""
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        match = _OFFSET.fullmatch(value) if isinstance(value, str) else None
        if match is None or not any(match.groups()[1:]):
            raise InvalidInput(f"{where} must be an offset from the import such as -3d, "
                               "-2h30m or a number of seconds", field=where.split("[")[0])
        seconds = sum(int(n or 0) * unit for n, unit in zip(match.groups()[1:], _UNITS, strict=True))
        seconds = -seconds if match.group(1) == "-" else seconds
    if abs(seconds) > _LIMIT:
        raise InvalidInput(f"{where} is more than a century away", field=where.split("[")[0])
    return seconds


def _items(node, path: tuple[str, ...], where: str):
    """Every dict at ``path`` below ``node``, with its place (``sessions[2].messages[0]``)."""
    if not path:
        yield node, where
        return
    if not isinstance(node, dict):
        return
    rows = node.get(path[0])
    here = f"{where}{'.' if where else ''}{path[0]}"
    if isinstance(rows, dict):  # ``lab``: an object of lists
        yield from _items(rows, path[1:], here)
        return
    if not isinstance(rows, list):  # the shape checks that follow name it
        return
    for n, row in enumerate(rows):
        yield from _items(row, path[1:], f"{here}[{n}]")


def resolve_times(doc, *, now: dt.datetime):
    """``doc`` with its offsets made ISO 8601 moments from ``now`` (a copy; ``doc`` is left
    as it is). Raises InvalidInput for a ``times`` other than ``"relative"`` and for an
    offset that is not one, naming its place (``memories[3].created_at``)."""
    if not isinstance(doc, dict) or "times" not in doc:
        return doc
    if doc["times"] != "relative":
        raise InvalidInput('times must be "relative" (or absent: ISO 8601 dates)',
                           field="times")
    doc = _copy(doc)
    del doc["times"]
    for path, fields in _PLACES:
        for item, where in _items(doc, path, ""):
            if not isinstance(item, dict):
                continue
            for field in fields:
                if item.get(field) is not None:
                    seconds = offset_seconds(item[field], f"{where}.{field}")
                    item[field] = (now + dt.timedelta(seconds=seconds)).isoformat()
    return doc


def _copy(node):
    """A copy of the document's lists and dicts (the values are immutable)."""
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


def relative_times(doc: dict, *, now: dt.datetime) -> dict:
    """The inverse, for a fixture's author: ``doc`` (an export) with every date an offset
    from ``now`` in whole seconds as text (``"-3d4h5s"``) and ``"times": "relative"``."""
    out = _copy(doc)
    out.pop("exported_at", None)
    for path, fields in _PLACES:
        for item, _ in _items(out, path, ""):
            for field in fields:
                if isinstance(item, dict) and isinstance(item.get(field), str):
                    moment = dt.datetime.fromisoformat(item[field])
                    item[field] = offset_text(round((moment - now).total_seconds()))
    return {"times": "relative", **out}


def offset_text(seconds: int) -> str:
    """``-277205`` -> ``"-3d5h5s"`` (``"+0s"`` for none)."""
    sign, left, parts = "-" if seconds < 0 else "+", abs(seconds), []
    for unit, name in zip(_UNITS[1:], "dhms", strict=True):
        if left >= unit:
            parts.append(f"{left // unit}{name}")
            left %= unit
    return sign + ("".join(parts) or "0s")
