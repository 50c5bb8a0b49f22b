"""JSON from outside (request bodies, uploaded and imported documents) with a bounded depth.

Python's ``json`` recurses once per nesting level, so ``[`` × 100,000 raises RecursionError
and every later walk over a deep value (validation, the ORM's encoder, the Redis mirror)
would too. :func:`load_json` parses and then measures the depth without recursion, so any
caller gets a plain InvalidInput (400) naming the limit instead.
"""

import json

from memories.errors import InvalidInput

MAX_JSON_DEPTH = 64


def json_depth(value) -> int:
    """Nesting depth of a parsed JSON value: 0 for a scalar, 1 for ``[]`` or ``{}``, ...
    Iterative (an explicit stack), so any depth is measured without RecursionError."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def too_deep(what: str, limit: int, *, field: str | None = None) -> InvalidInput:
    return InvalidInput(f"{what} is nested deeper than {limit} levels", field=field, limit=limit)


def load_json(data: bytes | str, *, max_depth: int = MAX_JSON_DEPTH, what: str = "the JSON"):
    """Parse ``data`` (UTF-8 bytes or text). Raises InvalidInput for text that is not JSON,
    not UTF-8, or nested deeper than ``max_depth`` levels (``limit`` in the error)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise too_deep(what, max_depth) from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} is not UTF-8 text") from None
    except ValueError as exc:
        raise InvalidInput(f"{what} is not valid JSON: {exc}") from None
    if json_depth(value) > max_depth:
        raise too_deep(what, max_depth)
    return value
