"""Recall filters (``since``, ``until``, ``author``, ``tags``, the agent scope, ``metadata``)
and the query's time plan.

Filters keep the matches whose hot-store hash satisfies every given condition; they never
change a score (BM25 statistics stay the namespace's). ``tags``: the memory has every tag
given. ``since`` is inclusive, ``until`` exclusive, both epoch seconds of ``created_at``.
``agents``: the memory's ``agent_id`` is one of them (an ``agent_id`` filter, or the agents a
token is restricted to); ``run_id`` equal; ``metadata``: ``(dotted path, string)`` pairs the
memory's metadata holds (as ``GET /memories?metadata.<path>=``). The same conditions in SQL
are ``memories.listing.scoped``.

:func:`time_plan` applies a profile's ``temporal`` setting (``search.temporal``) to a query:
which words are searched, and which window filters or boosts.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from search.analysis.timeparse import mentions_first, parse_query_time
from search.temporal import TimeWindow

_YEAR = re.compile(r"(?:19|20)\d{2}年?")


@dataclass(frozen=True)
class RecallFilters:
    since: float | None = None
    until: float | None = None
    author: str | None = None
    tags: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    run_id: str | None = None
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def active(self) -> bool:
        return (self.since is not None or self.until is not None or self.author is not None
                or bool(self.tags) or bool(self.agents) or self.run_id is not None
                or bool(self.metadata))

    @property
    def fields(self) -> tuple[str, ...]:
        """Hash fields these filters read beyond a window's rank fields
        (``search.serving.partial.RANK_FIELDS``)."""
        return ("metadata",) if self.metadata else ()

    def keep(self, doc: dict[str, str]) -> bool:
        """Whether a memory's hash (``created_at``, ``author``, ``tags``, ``agent_id``,
        ``run_id``, ``metadata``) passes."""
        created = float(doc["created_at"])
        if self.since is not None and created < self.since:
            return False
        if self.until is not None and created >= self.until:
            return False
        if self.author is not None and doc.get("author", "") != self.author:
            return False
        if self.tags:
            have = set(json.loads(doc.get("tags") or "[]"))
            if not set(self.tags) <= have:
                return False
        if self.agents and doc.get("agent_id", "") not in self.agents:
            return False
        if self.run_id is not None and doc.get("run_id", "") != self.run_id:
            return False
        if self.metadata:
            held = json.loads(doc.get("metadata") or "{}")
            return all(metadata_at(held, path) == value for path, value in self.metadata)
        return True


def metadata_at(metadata, path: str):
    """The value at dotted ``path`` of a metadata object (None when absent)."""
    for name in path.split("."):
        if not isinstance(metadata, dict):
            return None
        metadata = metadata.get(name)
    return metadata


@dataclass(frozen=True)
class Validity:
    """The facts a recall answers: those holding at some moment of ``[lo, hi]`` (epoch
    seconds), ``valid_from <= hi`` and ``valid_until > lo``. Recall's default is ``(now,
    inf)`` (valid now), ``as_of`` t is ``(t, t)``; a time range named in the query keeps the
    facts still holding when it began, ``(since, inf)``, and its boost or filter favours
    those of the range. ``include_superseded`` is no Validity at all (None)."""

    lo: float
    hi: float = math.inf

    def keep(self, doc: dict[str, str]) -> bool:
        """Whether a memory's hash passes; a hash read without its validity (a window the
        serving index filtered already) passes."""
        if "valid_from" not in doc:
            return True
        vf = float(doc["valid_from"]) if doc["valid_from"] else -math.inf
        vu = float(doc["valid_until"]) if doc.get("valid_until") else math.inf
        return vf <= self.hi and vu > self.lo

    def holds(self, valid_from: float, valid_until: float | None) -> bool:
        """The same test on a row's bounds (``valid_until`` None: still holds)."""
        return valid_from <= self.hi and (valid_until is None or valid_until > self.lo)

    @property
    def bounds(self) -> tuple[float, float]:
        return self.lo, self.hi


def validity_for(*, now: float, as_of: float | None, include_superseded: bool,
                 window: TimeWindow | None) -> Validity | None:
    """The Validity of a recall (see :class:`Validity`)."""
    if include_superseded:
        return None
    if as_of is not None:
        return Validity(as_of, as_of)
    if window is not None:
        return Validity(window.since)
    return Validity(now)


@dataclass
class TimePlan:
    """``text``: what the terms are analysed from; ``window``: the parsed range (or None);
    ``mode``: the profile's temporal setting; ``applied``: whether a filter held (set by
    the search: False when it matched nothing and was dropped)."""

    text: str
    mode: str = "off"
    window: TimeWindow | None = None
    label: str = ""
    applied: bool = False
    extra: dict = field(default_factory=dict)

    def explain(self) -> dict | None:
        """``{"range", "from", "mode", "applied"}`` for the response, None without a range."""
        if self.window is None:
            return None
        return {"range": self.label, "from": self.window.source, "mode": self.mode,
                "applied": self.applied}


def time_plan(query: str, *, mode: str, now: float, tz: dt.tzinfo,
              latest: Callable[[], dt.datetime | None],
              earliest: Callable[[], dt.datetime | None] = lambda: None) -> TimePlan:
    """Parse the query's time words for a profile whose ``temporal`` is ``mode``.

    ``now``: request time (epoch seconds); ``latest()``: the namespace's newest memory time,
    asked only when the query names a time (a month or day without a year means the latest
    such date not after it); ``earliest()``: its oldest, asked only when the query names the
    first conversation (that memory's day). ``boost`` removes the time words from the searched text
    (an explicit year stays: it is also a word of the memories that name it);
    ``filter`` keeps them (a filter that matches nothing is dropped, and the words then
    still count). ``off`` parses nothing.
    """
    if mode == "off" or not query.strip():
        return TimePlan(text=query, mode=mode)
    try:
        moment = dt.datetime.fromtimestamp(now, tz=dt.UTC)
        oldest = earliest() if mentions_first(query) else None
        parsed = parse_query_time(query, now=moment, tz=tz, earliest=oldest)
        if parsed.range is None:
            return TimePlan(text=query, mode=mode)
        newest = latest()
        if newest is not None and newest < moment:
            parsed = parse_query_time(query, now=moment, tz=tz, latest=newest, earliest=oldest)
    except (ValueError, OverflowError, OSError):
        # A range past the calendar's ends (a "now" in year 1 or 9999): no time, not a 500.
        return TimePlan(text=query, mode=mode)
    r = parsed.range
    window = TimeWindow(since=r.since.timestamp(), until=r.until.timestamp(), source=r.source)
    text = query if mode == "filter" else parsed.text
    if mode == "boost":
        # An explicit year is also a content word ("2008年北京奥运会", "in 2023"): it stays.
        years = _YEAR.findall(r.source)
        text = " ".join([text, *years]).strip()
    return TimePlan(text=text, mode=mode, window=window, label=r.label,
                    applied=mode == "boost")
