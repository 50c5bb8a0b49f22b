"""Time expressions in a recall query -> a ``created_at`` range, and the query without them.

Pure Python (no Django, no Redis). :func:`parse_query_time` finds the time words of a query
(English and Chinese), resolves them into one half-open range ``[since, until)`` of aware
datetimes in the caller's time zone, and returns the query with those words removed::

    >>> import datetime as dt
    >>> now = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
    >>> q = parse_query_time("张工上周提的那个 Redis 超时问题", now=now)
    >>> q.text, q.range.label
    ('张工提的那个 Redis 超时问题', '2026-11-23..2026-11-29')

What is recognised (case-insensitive; a leading "in/on/during/since/..." or "在/于" goes with it):

* English relative words, resolved by ``dateparser`` against ``now``: today, yesterday, the day
  before yesterday, last/this week|month|year, "N days|weeks|months|years ago", weekdays
  ("last Friday", "on Friday": the latest one not after today).
* English dates: "May", "in May", "May 2nd", "2nd of May", "May 2025", "May 2, 2025",
  ISO "2025-05-02" / "2025-05", "in 2025". A bare month name counts only after a preposition or
  with a day or year ("What may happen" and "March on" are not dates), or capitalised inside a
  sentence (except May and March, too common as words).
* The first conversation: "our first conversation|chat", "the first time we talked", "when we
  first met", "第一次对话|聊天|见面" (with ``earliest``: the day of the namespace's oldest memory).
* Chinese: 今天 昨天 前天 大前天 (昨晚, 今早 ...), 上周 本周 这周 上上周 下周 上星期 上个礼拜,
  上个月 这个月 本月, 去年 今年 前年, 2025年, N天前 / N周前 / N个月前 / N年前, 最近N天, 周五 / 上周五,
  "三月", "4月27号", "2025年3月", "2025年4月27日" (numerals as digits or 一..三十一).

Resolution rules:

* Ranges are whole calendar units in ``tz`` (default: ``now``'s zone): a day, a week from
  Monday (ISO), a month, a year. "N days ago" is that day; "最近N天" is the last N days up to
  the end of today.
* A month or day without a year is the latest such date not after ``latest`` (the namespace's
  newest memory; default ``now``): histories loaded from the past keep working. Relative words
  ("yesterday", "上周") always count from ``now``.
* Several expressions in one query give the range spanning all of them.

Why not ``dateparser.search.search_dates`` on the whole query: measured here (dateparser 1.5.0)
it is many times slower than the patterns below (docs/benchmarks.md, timeparse), reads "we"
as a weekday and "may" as the
month, and misreads "在4月27号" as 2027-04-01; its Chinese parser also returns nothing for
"4月27日", "三天前", "这周" and "上星期" and 2026-07-05 for "4 月 27 日". So the time words are
found by the patterns below, English relative phrases go to
``dateparser``'s ``DateDataParser`` (date and period), and Chinese and month/day forms are
resolved here.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from search.analysis.calendar_units import (
    NUM,
    add_months,
    latest_year,
    month_range,
    number,
    offset,
    unit_range,
    week_start,
)

__all__ = ["TimeQuery", "TimeRange", "mentions_first", "parse_query_time", "warm_up"]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A half-open ``created_at`` range ``[since, until)`` (aware datetimes) and its words."""

    since: dt.datetime
    until: dt.datetime
    source: str

    @property
    def label(self) -> str:
        """``"2026-11-23..2026-11-29"``: first and last local day of the range."""
        last = self.until - dt.timedelta(microseconds=1)
        return f"{self.since.date().isoformat()}..{last.date().isoformat()}"


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """The query without its time words (``text``) and the range they name (or None)."""

    text: str
    range: TimeRange | None


# --- English -----------------------------------------------------------------------------------

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]
_MONTH_NUMBER = {name: n for n, name in enumerate(_MONTHS, start=1)}
_MONTH_NUMBER.update({name[:3]: n for name, n in list(_MONTH_NUMBER.items())})
_MONTH_NUMBER["sept"] = 9
_MONTH_RE = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"  # noqa: E501
_PREP = r"(?:(?:in|on|during|since|by|of|from|until|till|around|early|late|mid|back\s+in)\s+)"
_ORD = r"(?:st|nd|rd|th)?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])"
_YEAR = r"(?:19|20)\d{2}"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_COUNT = r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"

_EN_RELATIVE = re.compile(
    rf"\b(?:{_PREP})?(?:"
    r"(?:the\s+)?day\s+before\s+yesterday|yesterday|today|tonight|last\s+night"
    r"|this\s+(?:morning|afternoon|evening)"
    r"|(?:last|this|past|previous)\s+(?:week|month|year)"
    rf"|{_COUNT}\s+(?:day|week|month|year)s?\s+ago"
    rf"|(?:(?:last|this|on)\s+)?{_WEEKDAY}"
    r")\b",
    re.IGNORECASE,
)
_EN_DATE = re.compile(
    rf"\b(?P<prep>{_PREP})?(?:"
    rf"(?P<iso>{_YEAR})-(?P<iso_m>1[0-2]|0?[1-9])(?:-(?P<iso_d>{_DAY}))?"
    rf"|(?P<m1>{_MONTH_RE})\.?(?:\s+(?P<d1>{_DAY}){_ORD}\b)?(?:,?\s+(?P<y1>{_YEAR}))?"
    rf"|(?:the\s+)?(?P<d2>{_DAY}){_ORD}\s+(?:of\s+)?(?P<m2>{_MONTH_RE})\.?(?:,?\s+(?P<y2>{_YEAR}))?"
    rf")\b",
    re.IGNORECASE,
)
_EN_YEAR = re.compile(rf"\b(?:in|during|since|of)\s+(?P<y>{_YEAR})\b", re.IGNORECASE)
# Month names that are also common words: dates only with a preposition, a day or a year.
_AMBIGUOUS_MONTHS = {"may", "march", "mar", "jun", "jan", "dec", "sep", "oct", "nov", "aug",
                     "apr", "feb", "jul"}


@lru_cache(maxsize=8)
def _dateparser(base: dt.datetime):
    """``dateparser``'s English parser counting from ``base`` (cached per day: building one,
    and the first import above all, take time a query should not pay)."""
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=["en"], settings={"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
    )


def warm_up() -> None:
    """Import ``dateparser`` and build today's parser now (slow the first time), so the
    first query with "yesterday" in a server process does not pay for it."""
    now = dt.datetime.now(dt.UTC)
    _en_relative("yesterday", now.date())


def _en_relative(words: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """Resolve an English relative phrase with ``dateparser`` (its date and period)."""
    phrase = re.sub(rf"^{_PREP}", "", words.strip(), flags=re.IGNORECASE).lower()
    phrase = re.sub(r"^(?:past|previous)\b", "last", phrase)
    if phrase in ("tonight", "this morning", "this afternoon", "this evening"):
        phrase = "today"
    elif phrase == "last night":
        phrase = "yesterday"
    data = _dateparser(dt.datetime.combine(today, dt.time(12, 0))).get_date_data(phrase)
    if data.date_obj is None:
        return None
    day = data.date_obj.date()
    if re.fullmatch(rf"(?:this\s+)?{_WEEKDAY}", phrase) and day > today:
        day -= dt.timedelta(days=7)
    period = data.period if data.period in ("week", "month", "year") else "day"
    return unit_range(day, period)


def _en_date(match: re.Match, raw: str, latest: dt.date) -> tuple[dt.date, dt.date] | None:
    g = match.groupdict()
    if g["iso"]:
        year, month = int(g["iso"]), int(g["iso_m"])
        if g["iso_d"]:
            return unit_range(dt.date(year, month, int(g["iso_d"])), "day")
        return month_range(year, month)
    name = (g["m1"] or g["m2"]).lower()
    day = g["d1"] or g["d2"]
    year = g["y1"] or g["y2"]
    if not (g["prep"] or day or year):
        word = match.group(0)
        first_word = raw[: match.start()].strip() == ""
        if name in _AMBIGUOUS_MONTHS or not word[0].isupper() or first_word:
            return None
    month = _MONTH_NUMBER[name]
    if day is None:
        return month_range(int(year) if year else latest_year(month, None, latest), month)
    day_n = int(day)
    y = int(year) if year else latest_year(month, day_n, latest)
    try:
        return unit_range(dt.date(y, month, day_n), "day")
    except ValueError:  # "February 30"
        return None


# --- Chinese -----------------------------------------------------------------------------------

_ZH_PREFIX = r"(?:在|于|从)?"
_ZH_DAY_WORDS = {"大前天": 3, "前天": 2, "昨天": 1, "昨日": 1, "昨晚": 1, "昨夜": 1,
                 "今天": 0, "今日": 0, "今早": 0, "今晚": 0, "今夜": 0}
_ZH_DAY = re.compile(_ZH_PREFIX + "(" + "|".join(_ZH_DAY_WORDS) + ")")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WEEK = r"(?:周|星期|礼拜)"
_ZH_REL_UNIT = re.compile(
    _ZH_PREFIX
    + rf"(?P<which>上上个?|上个?|本|这个?|下个?)(?P<unit>{_ZH_WEEK}|月)(?P<wd>[一二三四五六日天])?"
)
_ZH_BARE_WEEKDAY = re.compile(_ZH_PREFIX + rf"{_ZH_WEEK}(?P<wd>[一二三四五六日天])")
_ZH_YEAR_WORD = re.compile(_ZH_PREFIX + "(前年|去年|今年)")
_ZH_AGO = re.compile(_ZH_PREFIX + rf"(?P<n>{NUM})个?(?P<unit>天|日|{_ZH_WEEK}|月|年)(?:以前|之前|前)")
_ZH_RECENT = re.compile(rf"(?:最近|过去|近)(?P<n>{NUM})(?:天|日)")
_ZH_DATE = re.compile(
    _ZH_PREFIX
    + rf"(?:(?P<y>\d{{4}})年)?(?P<m>{NUM})月(?:份)?(?:(?P<d>{NUM})(?:日|号))?(?:这天|那天|当天)?"
)
_ZH_YEAR = re.compile(_ZH_PREFIX + r"((?:19|20)\d{2})年(?:份)?")
_ZH_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
             "月": "month", "年": "year"}


def _zh_rel_unit(m: re.Match, today: dt.date) -> tuple[dt.date, dt.date]:
    which = m["which"].rstrip("个")
    shift = {"上上": -2, "上": -1, "本": 0, "这": 0, "下": 1}[which]
    if m["unit"] == "月":
        first = add_months(today, shift)
        return month_range(first.year, first.month)
    start = week_start(today) + dt.timedelta(weeks=shift)
    if m["wd"]:
        return unit_range(start + dt.timedelta(days=_ZH_WEEKDAYS[m["wd"]]), "day")
    return start, start + dt.timedelta(days=7)


def _zh_date(m: re.Match, latest: dt.date) -> tuple[dt.date, dt.date] | None:
    month = number(m["m"])
    day = number(m["d"]) if m["d"] else None
    if not 1 <= month <= 12:
        return None
    year = int(m["y"]) if m["y"] else latest_year(month, day, latest)
    if day is None:
        return month_range(year, month)
    try:
        return unit_range(dt.date(year, month, day), "day")
    except ValueError:
        return None


# "Our first conversation": the day of the namespace's oldest memory (``earliest``).
_FIRST = re.compile(
    r"(?i)\b(?:(?:during|in|on|at) )?(?:our|the) (?:very )?first (?:conversation|chat|talk)s?\b"
    r"|\bthe first time (?:we|i) (?:talked|chatted|spoke|met)\b"
    r"|\bwhen we first (?:met|talked|chatted|spoke)\b"
    r"|(?:在)?(?:我们)?第一次(?:对话|聊天|交谈|谈话|见面|聊)(?:的时候|时)?")


def mentions_first(query: str) -> bool:
    """Whether ``query`` names the first conversation ("our first chat", "第一次聊天"), which
    resolves only with the namespace's oldest memory (``earliest`` of :func:`parse_query_time`)."""
    return _FIRST.search(query) is not None


# --- the parser ----------------------------------------------------------------------------------


def _candidates(raw: str, today: dt.date, latest: dt.date, earliest: dt.date | None = None):
    """Yield ``(start, end, (first_day, end_day) or None)`` for every time-word match."""
    if earliest is not None:
        for m in _FIRST.finditer(raw):
            yield m.start(), m.end(), unit_range(earliest, "day")
    for m in _ZH_DATE.finditer(raw):
        yield m.start(), m.end(), _zh_date(m, latest)
    for m in _ZH_DAY.finditer(raw):
        yield m.start(), m.end(), unit_range(today - dt.timedelta(_ZH_DAY_WORDS[m[1]]), "day")
    for m in _ZH_REL_UNIT.finditer(raw):
        yield m.start(), m.end(), _zh_rel_unit(m, today)
    for m in _ZH_BARE_WEEKDAY.finditer(raw):
        day = week_start(today) + dt.timedelta(days=_ZH_WEEKDAYS[m["wd"]])
        yield m.start(), m.end(), unit_range(day - dt.timedelta(weeks=day > today), "day")
    for m in _ZH_YEAR.finditer(raw):
        yield m.start(), m.end(), unit_range(dt.date(int(m[1]), 1, 1), "year")
    for m in _ZH_YEAR_WORD.finditer(raw):
        shift = {"前年": 2, "去年": 1, "今年": 0}[m[1]]
        yield m.start(), m.end(), unit_range(dt.date(today.year - shift, 1, 1), "year")
    for m in _ZH_AGO.finditer(raw):
        yield m.start(), m.end(), offset(_ZH_UNITS[m["unit"]], number(m["n"]), today)
    for m in _ZH_RECENT.finditer(raw):
        n = number(m["n"])
        yield m.start(), m.end(), (today - dt.timedelta(days=n - 1), today + dt.timedelta(days=1))
    for m in _EN_DATE.finditer(raw):
        yield m.start(), m.end(), _en_date(m, raw, latest)
    for m in _EN_YEAR.finditer(raw):
        yield m.start(), m.end(), unit_range(dt.date(int(m["y"]), 1, 1), "year")
    for m in _EN_RELATIVE.finditer(raw):
        yield m.start(), m.end(), _en_relative(m.group(0), today)


def parse_query_time(
    query: str,
    *,
    now: dt.datetime,
    tz: dt.tzinfo | None = None,
    latest: dt.datetime | None = None,
    earliest: dt.datetime | None = None,
) -> TimeQuery:
    """Find the time words of ``query`` and resolve them into a created_at range.

    ``now``: the request time (aware). ``tz``: the calendar's time zone (default ``now``'s).
    ``latest``: the namespace's newest memory time (aware; default ``now``), the anchor of a
    month or day without a year. ``earliest``: the namespace's oldest memory time (aware);
    with it, "our first conversation" / "第一次聊天" is that memory's day. Returns :class:`TimeQuery` whose ``text`` is ``query`` with
    the time words (and their preposition) cut out and white space tidied; ``range`` is None
    when the query names no time. Overlapping matches keep the longest. Raises ``ValueError``
    for a naive ``now`` or ``latest``.
    """
    if now.tzinfo is None or any(d is not None and d.tzinfo is None for d in (latest, earliest)):
        raise ValueError("now, latest and earliest must be aware datetimes")
    zone = tz or now.tzinfo
    today = now.astimezone(zone).date()
    anchor = min(latest, now) if latest is not None else now
    latest_day = anchor.astimezone(zone).date()

    found = sorted(
        (c for c in _candidates(query, today, latest_day,
                                None if earliest is None else earliest.astimezone(zone).date())
         if c[2] is not None),
        key=lambda c: (c[0], -(c[1] - c[0])),
    )
    spans: list[tuple[int, int, tuple[dt.date, dt.date]]] = []
    for start, end, days in found:
        if spans and start < spans[-1][1]:
            if end - start > spans[-1][1] - spans[-1][0]:
                spans[-1] = (start, end, days)
            continue
        spans.append((start, end, days))
    if not spans:
        return TimeQuery(text=query, range=None)

    first = min(days[0] for _, _, days in spans)
    last = max(days[1] for _, _, days in spans)
    source = " ".join(query[s:e].strip() for s, e, _ in spans)
    pieces, pos = [], 0
    for start, end, _ in spans:
        pieces.append(query[pos:start])
        pos = end
    pieces.append(query[pos:])
    text = re.sub(r"\s+([?？!！.,，。])", r"\1", re.sub(r"\s{2,}", " ", "".join(pieces)))
    text = text.strip(" \t\n,，、;；:：")
    since = dt.datetime.combine(first, dt.time(), tzinfo=zone)
    until = dt.datetime.combine(last, dt.time(), tzinfo=zone)
    return TimeQuery(text=text, range=TimeRange(since=since, until=until, source=source))
