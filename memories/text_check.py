"""The one text check every write goes through (pure: no Django, no Redis).

Text from outside must be storable by every database and by Redis, and readable by people:

- nowhere: a NUL (PostgreSQL refuses it in text; SQLite would keep it silently) or a lone
  surrogate (a JSON ``"\\ud800"``: no UTF-8 can hold it, so Redis and PostgreSQL refuse it,
  SQLite keeps the JSON escape and every later read breaks);
- free text (content, context, messages, prompts, metadata values): no other control
  character than TAB, LF and CR;
- single-line text (tags, keywords, source, author, roles, names): no control character at
  all, line breaks included (C0, DEL and C1).

:func:`check_text` raises :class:`TextRefused` with the path of the offending value
(``metadata.note.0``); the caller turns it into its own error (``InvalidInput`` → 400).
"""

import re
from collections.abc import Mapping

STORABLE = "storable"  # only what no store can hold: NUL and lone surrogates
FREE = "free"
LINE = "line"

_FREE_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BAD = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class TextRefused(ValueError):
    """``field`` names the value (a dotted path into dicts and lists), ``message`` says why."""

    def __init__(self, message: str, field: str | None):
        super().__init__(message)
        self.message = message
        self.field = field


def _why(value: str, kind: str) -> str | None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (a lone surrogate)"
    if "\x00" in value:
        return "must not contain NUL characters"
    if kind != STORABLE and (_LINE_BAD if kind == LINE else _FREE_BAD).search(value):
        return ("must not contain control characters or line breaks" if kind == LINE
                else "must not contain control characters other than tab and line breaks")
    return None


def check_text(value, field: str = "", *, kind: str = FREE) -> None:
    """Refuse unstorable text in ``value`` (a string, or dicts and lists of them, walked
    iteratively: any depth). Keys of a mapping are checked as single-line text.

    Raises TextRefused naming the innermost field; returns None when everything is fine.
    """
    stack = [(value, field, kind)]
    while stack:
        item, path, item_kind = stack.pop()
        if isinstance(item, str):
            why = _why(item, item_kind)
            if why is not None:
                raise TextRefused(f"{path or 'value'} {why}", path or None)
        elif isinstance(item, Mapping):
            key_kind = STORABLE if item_kind == STORABLE else LINE
            children = []
            for key, child in item.items():
                children.append((key, path, key_kind))
                children.append((child, f"{path}.{key}" if path else str(key), item_kind))
            stack.extend(reversed(children))  # reversed: the first field is reported first
        elif isinstance(item, list | tuple):
            stack.extend(reversed([(child, f"{path}.{n}" if path else str(n), item_kind)
                                   for n, child in enumerate(item)]))
