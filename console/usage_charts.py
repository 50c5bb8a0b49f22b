"""Inline SVG geometry of the Usage page's day charts (PURE: no Django, no JavaScript).

A chart is a plot area with y ticks, one x label every few days, and either bars (a count
per day) or polylines (one per series, gaps where a day has no value).
"""

import datetime as dt
import math
from dataclasses import dataclass, field

WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28


@dataclass
class DayChart:
    title: str
    width: int = WIDTH
    height: int = HEIGHT
    plot: dict = field(default_factory=dict)
    y_ticks: list[dict] = field(default_factory=list)
    x_labels: list[dict] = field(default_factory=list)
    bars: list[dict] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    legend: list[dict] = field(default_factory=list)


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def nice_top(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k at or above ``value`` (1 for 0): a y axis top
    whose halves are round numbers."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def _frame(title: str, days: list[dt.date], top: float) -> DayChart:
    chart = DayChart(title=title)
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    chart.plot = {"x": LEFT, "y": TOP, "w": pw, "h": ph, "bottom": TOP + ph, "right": LEFT + pw,
                  "slot": pw / max(len(days), 1)}
    for share in (0, 0.5, 1):
        chart.y_ticks.append({"y": _num(TOP + (1 - share) * ph),
                              "text": _num(top * share)})
    every = max(1, math.ceil(len(days) / 8))
    for i, day in enumerate(days):
        if (len(days) - 1 - i) % every == 0:  # counted back from today: today is labelled
            chart.x_labels.append({"x": _num(LEFT + (i + 0.5) * chart.plot["slot"]),
                                   "text": day.strftime("%d %b")})
    return chart


def bar_chart(title: str, days: list[dt.date], counts: list[int], colour: str) -> DayChart:
    """One bar per day, height ``counts[i]`` on an axis from 0 to a round top."""
    top = nice_top(max(counts, default=0))
    chart = _frame(title, days, top)
    slot, ph = chart.plot["slot"], chart.plot["h"]
    for i, (day, n) in enumerate(zip(days, counts, strict=True)):
        h = ph * n / top
        chart.bars.append({"x": _num(LEFT + i * slot + slot * 0.15), "w": _num(slot * 0.7),
                           "y": _num(TOP + ph - h), "h": _num(h), "colour": colour,
                           "title": f"{day.isoformat()}: {n}"})
    return chart


def line_chart(title: str, days: list[dt.date],
               series: dict[str, tuple[list, str]]) -> DayChart:
    """One polyline per series ``{name: (values per day, colour)}``; a None value breaks
    the line (each unbroken run is its own polyline). The unit goes in the title."""
    values = [v for vs, _ in series.values() for v in vs if v is not None]
    top = nice_top(max(values, default=0))
    chart = _frame(title, days, top)
    slot, ph = chart.plot["slot"], chart.plot["h"]
    for name, (vs, colour) in series.items():
        chart.legend.append({"label": name, "colour": colour})
        run: list[str] = []
        for i, v in enumerate([*vs, None]):
            if v is None:
                if run:
                    chart.lines.append({"points": " ".join(run), "colour": colour,
                                        "single": len(run) == 1,
                                        "cx": run[0].split(",")[0], "cy": run[0].split(",")[1],
                                        "title": name})
                run = []
                continue
            run.append(f"{_num(LEFT + (i + 0.5) * slot)},{_num(TOP + ph - ph * v / top)}")
    return chart
