"""Numerals and calendar units for time expressions (PURE: no Django, no Redis).

Ranges are half-open pairs of dates ``(first day, day after the last)``; ``week`` starts on
Monday. ``number`` reads digits or Chinese numerals up to ``NUM``'s reach (ValueError
otherwise).
"""

import calendar
import datetime as dt

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
             "六": 6, "七": 7, "八": 8, "九": 9}
NUM = r"(?:\d{1,4}|[零〇一二两三四五六七八九十]{1,4})"


def number(text: str) -> int:
    """``"27"`` / ``"二十七"`` / ``"十"`` / ``"两"`` -> int. Raises ValueError otherwise."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        value = (CN_DIGITS[tens] if tens else 1) * 10 + (CN_DIGITS[ones] if ones else 0)
        return value
    value = 0
    for ch in text:
        value = value * 10 + CN_DIGITS[ch]
    return value


def week_start(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def month_range(year: int, month: int) -> tuple[dt.date, dt.date]:
    first = dt.date(year, month, 1)
    return first, first + dt.timedelta(days=calendar.monthrange(year, month)[1])


def add_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def unit_range(day: dt.date, unit: str) -> tuple[dt.date, dt.date]:
    """The calendar ``unit`` (day / week / month / year) that holds ``day``."""
    if unit == "week":
        start = week_start(day)
        return start, start + dt.timedelta(days=7)
    if unit == "month":
        return month_range(day.year, day.month)
    if unit == "year":
        return dt.date(day.year, 1, 1), dt.date(day.year + 1, 1, 1)
    return day, day + dt.timedelta(days=1)


def latest_year(month: int, day: int | None, latest: dt.date) -> int:
    """The year of the latest (month, day) -- or month -- not after ``latest``."""
    if (month, day or 1) <= (latest.month, latest.day if day else 1):
        return latest.year
    return latest.year - 1


def offset(unit: str, n: int, today: dt.date) -> tuple[dt.date, dt.date]:
    """The ``unit`` that lies ``n`` units before the one holding ``today``."""
    if unit == "day":
        return unit_range(today - dt.timedelta(days=n), "day")
    if unit == "week":
        return unit_range(today - dt.timedelta(weeks=n), "week")
    if unit == "month":
        return month_range(*(lambda d: (d.year, d.month))(add_months(today, -n)))
    return unit_range(dt.date(today.year - n, 1, 1), "year")
