"""search.analysis.timeparse: time words of a query -> a created_at range (pure)."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from search.analysis.timeparse import parse_query_time

UTC = dt.UTC
# A Tuesday.
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def days(query, **kw):
    """(label, text) of a parse at NOW unless told otherwise."""
    parsed = parse_query_time(query, now=kw.pop("now", NOW), **kw)
    return (parsed.range.label if parsed.range else None), parsed.text


@pytest.mark.parametrize(
    ("query", "label", "text"),
    [
        ("what did we talk about yesterday", "2026-11-30..2026-11-30", "what did we talk about"),
        ("last week Redis timeout", "2026-11-23..2026-11-29", "Redis timeout"),
        ("notes from this week", "2026-11-30..2026-12-06", "notes"),
        ("last month budget", "2026-11-01..2026-11-30", "budget"),
        ("What did Calvin's studio go through in May?", "2026-05-01..2026-05-31",
         "What did Calvin's studio go through?"),
        ("On April 27th, how long did I run in the park?", "2026-04-27..2026-04-27",
         "how long did I run in the park?"),
        ("the 2nd of May trip", "2026-05-02..2026-05-02", "trip"),
        ("What did Caroline do in March 2023?", "2023-03-01..2023-03-31", "What did Caroline do?"),
        ("I went there on 8 May, 2023", "2023-05-08..2023-05-08", "I went there"),
        ("release 2025-04-27 notes", "2025-04-27..2025-04-27", "release notes"),
        ("in 2025 we moved", "2025-01-01..2025-12-31", "we moved"),
        ("two weeks ago", "2026-11-16..2026-11-22", ""),
        ("3 days ago", "2026-11-28..2026-11-28", ""),
        ("last Friday", "2026-11-27..2026-11-27", ""),
        ("张工上周提的那个 Redis 超时问题", "2026-11-23..2026-11-29", "张工提的那个 Redis 超时问题"),
        ("昨天我们聊了什么", "2026-11-30..2026-11-30", "我们聊了什么"),
        ("前天", "2026-11-29..2026-11-29", ""),
        ("三月的计划", "2026-03-01..2026-03-31", "的计划"),
        ("在4月27号这天，我在公园里跑了多久？", "2026-04-27..2026-04-27", "我在公园里跑了多久？"),
        ("我曾经在5月2日提到过我去了博物馆", "2026-05-02..2026-05-02", "我曾经提到过我去了博物馆"),
        ("二十七号", None, "二十七号"),
        ("四月二十七日的会", "2026-04-27..2026-04-27", "的会"),
        ("上个月", "2026-11-01..2026-11-30", ""),
        ("这周", "2026-11-30..2026-12-06", ""),
        ("上星期的会议", "2026-11-23..2026-11-29", "的会议"),
        ("上周五", "2026-11-27..2026-11-27", ""),
        ("三天前", "2026-11-28..2026-11-28", ""),
        ("最近7天", "2026-11-25..2026-12-01", ""),
        ("去年", "2025-01-01..2025-12-31", ""),
        ("2025年3月的会议", "2025-03-01..2025-03-31", "的会议"),
        ("2008年奥运会", "2008-01-01..2008-12-31", "奥运会"),
    ],
)
def test_expressions(query, label, text):
    assert days(query) == (label, text)


@pytest.mark.parametrize(
    "query",
    ["How does Calvin unwind?", "What may happen next?", "May I ask about the budget?",
     "march on", "I have 27 apples", "we spent 2 days there", "Redis 超时问题"],
)
def test_words_that_are_not_times(query):
    assert days(query) == (None, query)


@pytest.mark.parametrize("query", ["yesterday", "May 2nd", "上周", "4月27号", "2025-04-27"])
def test_a_query_that_is_only_a_date(query):
    parsed = parse_query_time(query, now=NOW)
    assert parsed.text == ""
    assert parsed.range is not None and parsed.range.source == query


def test_range_is_half_open_and_aware_in_the_zone():
    shanghai = ZoneInfo("Asia/Shanghai")
    parsed = parse_query_time("昨天", now=NOW, tz=shanghai)
    assert parsed.range.since == dt.datetime(2026, 11, 30, tzinfo=shanghai)
    assert parsed.range.until == dt.datetime(2026, 12, 1, tzinfo=shanghai)
    assert parsed.range.since.utcoffset() == dt.timedelta(hours=8)


def test_the_calendar_day_depends_on_the_time_zone():
    # 02:00 UTC on Dec 1 is still Nov 30 in Los Angeles and already Dec 1 in Shanghai.
    now = dt.datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
    assert days("yesterday", now=now, tz=ZoneInfo("Asia/Shanghai"))[0] == "2026-11-30..2026-11-30"
    assert days("yesterday", now=now, tz=ZoneInfo("America/Los_Angeles"))[0] == (
        "2026-11-29..2026-11-29"
    )
    # The zone of `now` is the default calendar.
    tokyo_now = now.astimezone(ZoneInfo("Asia/Tokyo"))
    assert days("today", now=tokyo_now)[0] == "2026-12-01..2026-12-01"


def test_week_across_a_dst_change_keeps_local_midnights():
    berlin = ZoneInfo("Europe/Berlin")
    now = dt.datetime(2026, 11, 2, 12, 0, tzinfo=berlin)  # Monday after the switch (Oct 25)
    parsed = parse_query_time("last week", now=now)
    assert parsed.range.label == "2026-10-26..2026-11-01"
    assert parsed.range.since.hour == 0 and parsed.range.until.hour == 0


def test_a_date_without_a_year_is_the_latest_not_after_the_newest_memory():
    latest = dt.datetime(2023, 5, 20, 10, 0, tzinfo=UTC)  # a history loaded from the past
    assert days("in May", latest=latest)[0] == "2023-05-01..2023-05-31"
    assert days("4月27号", latest=latest)[0] == "2023-04-27..2023-04-27"
    assert days("June 3rd", latest=latest)[0] == "2022-06-03..2022-06-03"
    assert days("May 21", latest=latest)[0] == "2022-05-21..2022-05-21"
    assert days("May 20", latest=latest)[0] == "2023-05-20..2023-05-20"
    # Relative words still count from now.
    assert days("yesterday", latest=latest)[0] == "2026-11-30..2026-11-30"
    # A year given is kept.
    assert days("May 2025", latest=latest)[0] == "2025-05-01..2025-05-31"


def test_several_expressions_span_all_of_them():
    parsed = parse_query_time("between April 3rd and May 2nd", now=NOW)
    assert parsed.range.label == "2026-04-03..2026-05-02"
    assert parsed.text == "between and"


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError):
        parse_query_time("yesterday", now=dt.datetime(2026, 12, 1))
    with pytest.raises(ValueError):
        parse_query_time("yesterday", now=NOW, latest=dt.datetime(2026, 12, 1))


@pytest.mark.parametrize("query, text", [
    ("Do you remember what we talked about during our first conversation?",
     "Do you remember what we talked about?"),
    ("What did I tell you the first time we talked?", "What did I tell you?"),
    ("你还记得我们第一次对话的时候，聊了什么话题吗？", "你还记得，聊了什么话题吗？"),
    ("第一次聊天时我提到了谁", "我提到了谁"),
])
def test_the_first_conversation_is_the_day_of_the_oldest_memory(query, text):
    oldest = dt.datetime(2023, 4, 27, 23, 30, tzinfo=UTC)
    q = parse_query_time(query, now=NOW, earliest=oldest)
    assert (q.range.label, q.text) == ("2023-04-27..2023-04-27", text)
    # In Shanghai that memory was written on the 28th.
    q = parse_query_time(query, now=NOW, earliest=oldest, tz=ZoneInfo("Asia/Shanghai"))
    assert q.range.label == "2023-04-28..2023-04-28"
    # Without the oldest memory (an empty namespace) it names no time.
    assert parse_query_time(query, now=NOW).range is None


def test_first_without_a_conversation_is_not_a_time():
    oldest = dt.datetime(2023, 4, 27, tzinfo=UTC)
    for query in ("first prize in the contest", "my first car", "第一次去北京"):
        assert parse_query_time(query, now=NOW, earliest=oldest).range is None
