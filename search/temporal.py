"""How a query's time range acts on recall: off, as a filter, or as a boost (pure).

A ranking profile's ``temporal`` setting decides what a time range parsed from the query
(``search.analysis.timeparse``) does:

* ``off``: nothing is parsed; the query's words are searched as written.
* ``filter``: only memories created in ``[since, until)`` are returned; when none of the
  matches lies in the range the filter is dropped (a wrong guess never empties a recall).
  The time words stay in the terms.
* ``boost`` (the default profile's): every match stays; those created in the range score
  ``(1 + w_time)`` times higher, those outside by ``1 + w_time * 0.5 ** (gap / width)``
  (``gap`` = distance to the range, ``width`` = its length, so a neighbouring day of a
  one-day range still counts a little and last year counts nothing). The time words are
  removed from the terms, so "May" does not match the verb "may".

Times are epoch seconds (floats), as the index stores ``created_at``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MODES", "TimeWindow", "boost_factor", "in_window"]

MODES = ("off", "filter", "boost")


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[since, until)`` in epoch seconds and the words it came from."""

    since: float
    until: float
    source: str = ""

    def __post_init__(self) -> None:
        if not self.until > self.since:
            raise ValueError("until must be after since")


def in_window(created_at: float, window: TimeWindow) -> bool:
    """Whether ``created_at`` lies in ``[since, until)``."""
    return window.since <= created_at < window.until


def boost_factor(created_at: float, window: TimeWindow, w_time: float) -> float:
    """The multiplier ``>= 1`` a match gets: ``1 + w_time`` inside the window, decaying by
    half per window length outside it. ``w_time`` 0 gives 1 (no boost)."""
    if w_time <= 0:
        return 1.0
    if in_window(created_at, window):
        return 1.0 + w_time
    gap = window.since - created_at if created_at < window.since else created_at - window.until
    return 1.0 + w_time * 0.5 ** (gap / (window.until - window.since))
