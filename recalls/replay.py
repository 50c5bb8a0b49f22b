"""A traced recall asked again: the same query with the same filters, against the memories
as they are now, with the recall's ranking profile or another one.

A replay observes: it is not traced and counts no recall hit (``count_hits`` off), so
looking at a recall changes neither the log nor the ranking's recency.
"""

import datetime as dt

from memories.errors import InvalidInput
from recalls.act import TIMES
from recalls.models import Recall
from search.memory_search import memory_search
from search.models import RankingProfile
from search.results import SearchResult

# The filters and options of a trace (``Recall.filters``, as ``recalls.act`` keeps them)
# that ``memory_search`` takes back; any other name a trace may hold is left out.
SEARCH_ARGS = frozenset({
    "limit", "conversation_id", "types", "match_mode", "since", "until", "author", "tags",
    "now", "as_of", "include_superseded", "agents", "run_id", "metadata",
})
LIMIT_DEFAULT = 5  # memory_search's own default, for a trace that kept none
# The type each of them must hold (times apart: ISO 8601 strings, see ``_epoch``); a trace
# holding another (an older writer's, a hand-edited row) cannot be replayed.
KINDS = {"limit": int, "conversation_id": str, "types": list, "match_mode": str,
         "author": str, "tags": list, "include_superseded": bool, "agents": list,
         "run_id": str, "metadata": dict}
ITEMS = {"types": str, "tags": str, "agents": str}


def _epoch(name: str, value) -> float:
    """An ISO 8601 time of a trace as epoch seconds (a naive one read as UTC)."""
    try:
        moment = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"the trace's {name} is not an ISO 8601 time: {value!r}",
                           field="filters") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _holds(name: str, value) -> bool:
    """Whether ``value`` has the type filter ``name`` takes (a bool is no limit)."""
    kind = KINDS[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        return False
    if kind is list:
        return all(isinstance(v, ITEMS[name]) for v in value)
    if kind is dict:
        return all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return True


def replay_args(recall: Recall) -> dict:
    """The ``memory_search`` keyword arguments (besides ``user_id``, ``query`` and
    ``profile``) of ``recall``'s filters: times (``since``, ``until``, ``now``, ``as_of``)
    as epoch seconds, ``agents`` and ``types`` as lists, ``limit`` as given (or
    ``LIMIT_DEFAULT``). A ``now`` the recall named is kept: it anchored its relative times
    and the validity it asked for. Raises InvalidInput (field ``filters``) for a time that
    does not parse or a filter of another type than a recall takes."""
    out = {"limit": LIMIT_DEFAULT}
    for name, value in (recall.filters or {}).items():
        if name not in SEARCH_ARGS:
            continue
        if name in TIMES:
            value = _epoch(name, value)
        elif not _holds(name, value):
            raise InvalidInput(f"the trace's {name} is not a {KINDS[name].__name__} of "
                               f"the kind a recall takes: {value!r}", field="filters")
        out[name] = value
    return out


def recall_replay(recall: Recall, *, profile: str | RankingProfile | None = None
                  ) -> SearchResult:
    """``recall`` asked again now, with ``profile`` (default: the recall's own, as it is
    today). Raises NotFound for a profile that no longer exists, IndexRebuilding and
    ``redis.RedisError`` as ``memory_search`` does, InvalidInput as :func:`replay_args`."""
    return memory_search(user_id=recall.user_id, query=recall.query,
                         profile=profile or recall.profile, count_hits=False,
                         **replay_args(recall))
