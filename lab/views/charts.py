"""Inline SVG chart geometry for the lab pages (no JavaScript charting library)."""

from dataclasses import dataclass, field

from lab.views.common import METRIC_LABELS, fmt_number

# Colours of the two sides and of the score parts (also in static/lab/lab.css).
SIDE_COLOURS = {"a": "#2f5fd0", "b": "#d9822b", "c": "#8e44ad", "d": "#16a3b8"}

PART_COLOURS = {"relevance": "#2f5fd0", "recency": "#1f9d6b", "importance": "#e0a100"}

SERIES_COLOURS = [
    "#2f5fd0",
    "#d9822b",
    "#1f9d6b",
    "#8e44ad",
    "#c0392b",
    "#16a3b8",
    "#6b7a8f",
    "#b8860b",
]


# --- charts (inline SVG geometry) -------------------------------------------------------------


@dataclass
class Bar:
    x: str
    y: str
    w: str
    h: str
    colour: str
    title: str


@dataclass
class Chart:
    width: int
    height: int
    bars: list[Bar] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    x_labels: list[dict] = field(default_factory=list)
    y_ticks: list[dict] = field(default_factory=list)
    legend: list[dict] = field(default_factory=list)
    plot: dict = field(default_factory=dict)


def stacked_bar(parts: dict[str, float], top: float, width: float = 150) -> list[Bar]:
    """One result's score as relevance / recency / importance segments, scaled so the
    column's best score fills ``width``."""
    out, x = [], 0.0
    for name in ("relevance", "recency", "importance"):
        w = width * parts[name] / top if top > 0 else 0.0
        if w > 0:
            out.append(
                Bar(fmt_number(x), "0", fmt_number(w), "12", PART_COLOURS[name], f"{name} {parts[name]:.4f}")
            )
        x += w
    return out


def score_chart(sides: list[tuple[str, str, list[float]]], k: int) -> Chart:
    """Score against rank for each side (label, colour, scores best first), each scaled to
    its own best score: BM25 and hybrid scores live on different scales, their shapes
    compare."""
    chart = Chart(width=560, height=190)
    left, right, top, bottom = 44, 14, 12, 30
    pw, ph = chart.width - left - right, chart.height - top - bottom
    chart.plot = {"x": left, "y": top, "w": pw, "h": ph, "bottom": top + ph, "right": left + pw}
    span = max(k - 1, 1)

    def x(rank):
        return left + (rank - 1) * pw / span

    for rank in range(1, k + 1):
        if k <= 12 or rank in (1, k) or rank % 5 == 0:
            chart.x_labels.append({"x": fmt_number(x(rank)), "text": str(rank)})
    for value in (0.0, 0.5, 1.0):
        chart.y_ticks.append({"y": fmt_number(top + (1 - value) * ph), "text": f"{value:g}"})
    for label, colour, scores in sides:
        best = max(scores, default=0.0)
        points = [
            {
                "x": fmt_number(x(r)),
                "y": fmt_number(top + (1 - (s / best if best > 0 else 0)) * ph),
                "title": f"{label} #{r}: {s:.4f}",
            }
            for r, s in enumerate(scores, start=1)
        ]
        chart.lines.append(
            {
                "label": label,
                "colour": colour,
                "points": points,
                "polyline": " ".join(f"{p['x']},{p['y']}" for p in points),
            }
        )
        chart.legend.append({"label": label, "colour": colour})
    return chart


def metric_bars(series: list[tuple[str, dict]]) -> Chart:
    """Grouped bars, one group per metric (0..1), one bar per series (label, metrics)."""
    chart = Chart(width=600, height=210)
    left, right, top, bottom = 40, 10, 12, 30
    pw, ph = chart.width - left - right, chart.height - top - bottom
    chart.plot = {"x": left, "y": top, "w": pw, "h": ph, "bottom": top + ph, "right": left + pw}
    group = pw / len(METRIC_LABELS)
    n = max(len(series), 1)
    bar = min(34.0, (group - 18) / n)
    for gi, (metric, label) in enumerate(METRIC_LABELS.items()):
        start = left + gi * group + (group - bar * n) / 2
        chart.x_labels.append({"x": fmt_number(left + gi * group + group / 2), "text": label})
        for si, (name, values) in enumerate(series):
            value = values.get(metric) or 0.0
            h = ph * max(0.0, min(1.0, value))
            chart.bars.append(
                Bar(
                    fmt_number(start + si * bar + 1),
                    fmt_number(top + ph - h),
                    fmt_number(bar - 2),
                    fmt_number(h),
                    SERIES_COLOURS[si % len(SERIES_COLOURS)],
                    f"{name} · {label} {value:.3f}",
                )
            )
    for value in (0.0, 0.25, 0.5, 0.75, 1.0):
        chart.y_ticks.append({"y": fmt_number(top + (1 - value) * ph), "text": f"{value:g}"})
    chart.legend = [
        {"label": name, "colour": SERIES_COLOURS[i % len(SERIES_COLOURS)]}
        for i, (name, _) in enumerate(series)
    ]
    return chart

