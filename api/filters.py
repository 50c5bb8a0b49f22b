"""The one set of memory filters every reading interface takes (REST recall and
``GET /memories``, MCP ``search_memories`` and ``list_memories``; the clients and the
LangGraph store send them): ``since``, ``until``, ``author``, ``tags``, ``now``, ``as_of``,
``agent_id``, ``run_id`` and ``metadata`` (dotted path -> string).

:func:`parse_filters` checks them once (400 naming the field) and applies the token's agent
restriction (403); :meth:`Filters.search_args` gives ``search.memory_search``'s keyword
arguments and :meth:`Filters.list_args` ``memories.listing.memory_page``'s.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from api.core import agent_scope
from memories.errors import InvalidInput
from memories.listing import clean_metadata_filters
from memories.validation import clean_identifier, clean_string_list, parse_iso_datetime

AUTHOR_MAX = 128
TIMES = ("since", "until", "now", "as_of")


@dataclass(frozen=True)
class Filters:
    """Checked filters: times as aware datetimes (None: not given), ``agents`` the agents
    kept (``[agent_id]``, or the token's agents; empty: any)."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None
    now: dt.datetime | None = None
    as_of: dt.datetime | None = None
    author: str | None = None
    tags: list[str] | None = None
    agents: list[str] = field(default_factory=list)
    run_id: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    def search_args(self) -> dict:
        """``memory_search``'s filter arguments (times as epoch seconds)."""
        def seconds(value):
            return None if value is None else value.timestamp()

        return {"since": seconds(self.since), "until": seconds(self.until),
                "now": seconds(self.now), "as_of": seconds(self.as_of),
                "author": self.author, "tags": self.tags, "agents": self.agents,
                "run_id": self.run_id, "metadata": self.metadata}

    def list_args(self) -> dict:
        """``memory_page``'s filter arguments. A list keeps every fact, whatever its
        validity, unless ``as_of`` or ``now`` names the moment whose facts it keeps (recall
        keeps the facts valid now by default)."""
        moment = self.as_of or self.now
        return {"since": self.since, "until": self.until, "author": self.author,
                "tags": self.tags or (), "agents": self.agents, "run_id": self.run_id,
                "metadata": self.metadata,
                "valid": None if moment is None else (moment, moment)}


def parse_filters(request, *, since=None, until=None, now=None, as_of=None, author=None,
                  tags=None, agent_id=None, run_id=None, metadata=None) -> Filters:
    """:class:`Filters` from a request's raw values: times ISO 8601 text (or datetimes),
    ``tags`` a list of strings, ``metadata`` an object of dotted path: string. Raises
    InvalidInput (400) naming the field, PermissionDenied (403) for an ``agent_id`` outside
    the token's agents."""
    when = {}
    for name, value in zip(TIMES, (since, until, now, as_of), strict=True):
        if isinstance(value, dt.datetime):
            value = value.isoformat()
        if value is not None:
            when[name] = parse_iso_datetime(value, name)
    if "since" in when and "until" in when and when["until"] <= when["since"]:
        raise InvalidInput("until must be after since", field="until")
    if author is not None and (not isinstance(author, str) or len(author) > AUTHOR_MAX):
        raise InvalidInput(f"author must be a string of at most {AUTHOR_MAX} characters",
                           field="author")
    if agent_id is not None:
        agent_id = clean_identifier(agent_id, "agent_id")
    return Filters(
        **when, author=author,
        tags=clean_string_list(tags, "tags") if tags is not None else None,
        agents=agent_scope(request, agent_id),
        run_id=clean_identifier(run_id, "run_id") if run_id is not None else None,
        metadata=clean_metadata_filters(metadata))
