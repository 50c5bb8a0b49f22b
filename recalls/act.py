"""One recall as every adapter performs it (REST ``/recall``, MCP ``search_memories``, the
console's search): the search, its metrics, its hits counted, its trace buffered."""

import datetime as dt

from integrations.metrics.registry import observe_recall
from memories import access
from recalls.log import recall_log
from search.memory_search import memory_search
from search.results import SearchResult

TIMES = ("since", "until", "now", "as_of")


def _applied(search_args: dict) -> dict:
    """The filters and options a recall applied, as its trace keeps them: the ones given
    (times as ISO 8601), ``agents`` as the list it kept."""
    out = {}
    for name, value in search_args.items():
        if name in ("user_id", "query", "profile") or value in (None, [], (), {}, False):
            continue
        if name in TIMES:
            value = dt.datetime.fromtimestamp(value, dt.UTC).isoformat()
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def recall_traced(*, actor: str, interface: str, token_id: int | None = None,
                  count_hits: bool = True, at: dt.datetime | None = None,
                  **search_args) -> tuple[SearchResult, str | None]:
    """``memory_search(**search_args)`` (``user_id``, ``query``, ``limit``, filters ...),
    then its metrics, a recall hit on each result (``count_hits``; the console's search
    counts none: an audit must not change what it observes) and its trace
    (``recalls.log.recall_log``: ``actor`` the username, ``token_id`` the API token's id,
    None from the console; ``at`` its time, default now). Returns ``(found, recall_id)``; ``recall_id`` is None
    when the recall was not traced. Raises what ``memory_search`` raises."""
    found = memory_search(count_hits=count_hits, **search_args)
    observe_recall(profile=found.profile, took_ms=found.took_ms, results=len(found.results))
    if count_hits:
        access.recall_hits_record(user_id=search_args["user_id"],
                                  memory_ids=[h.memory_id for h in found.results],
                                  counted=found.hits_counted)
    recall_id = recall_log(found=found, user_id=search_args["user_id"], actor=actor,
                           token_id=token_id, at=at,
                           interface=interface, query=search_args["query"],
                           agents=list(search_args.get("agents") or ()),
                           filters=_applied(search_args))
    return found, recall_id
