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

In ``boost`` the range also counts as one more query term (:func:`time_term`): every memory
created in it matches that term, so a memory of the day asked about is a candidate even
when it shares no word with the question ("What was my mood on May 2nd?" and a turn of that
day saying "I have been feeling down"). Its weight is a BM25 term's with tf 1 at the average
length, ``idf(N, n_in) / (1 + k1)`` (Lucene 8 form, ``search.scoring.idf``), ``n_in`` being
the memories in the range: a range as narrow as a day weighs like a rare word, a range
holding most of the namespace weighs almost nothing.

Times are epoch seconds (floats), as the index stores ``created_at``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["MODES", "TimeWindow", "boost_factor", "in_window", "time_term"]

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


def time_term(n_docs: int, n_in: int, k1: float) -> float:
    """The BM25 contribution of the query's time range to a memory created in it:
    ``ln(1 + (N - n + 0.5) / (n + 0.5)) / (1 + k1)`` (tf 1 at the average length; ``N`` =
    live memories of the namespace, ``n`` = those in the range). 0 when the range holds
    nothing. Raises ValueError for negative counts."""
    if n_docs < 0 or n_in < 0:
        raise ValueError("counts must be >= 0")
    if n_in == 0:
        return 0.0
    n_docs = max(n_docs, n_in)
    return math.log(1.0 + (n_docs - n_in + 0.5) / (n_in + 0.5)) / (1.0 + k1)
