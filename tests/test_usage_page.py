"""The Usage page: recalls and writes per day, per token and namespace, recall time
p50/p95 per day, HTTP requests, errors and latency per view from the metrics; and the two
pure pieces under it: Prometheus' histogram quantile and the day charts' geometry."""

import datetime as dt

import pytest
from django.utils import timezone
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from accounts.models import ApiToken
from console.usage import usage
from console.usage_charts import bar_chart, line_chart, nice_top
from integrations.metrics.http_figures import histogram_quantile, http_figures
from integrations.metrics.registry import LATENCY_BUCKETS
from recalls.models import Recall
from tests.conftest import ApiClient
from tests.helpers import create, recall_answer

pytestmark = pytest.mark.django_db


def test_histogram_quantile_interpolates_inside_the_bucket_as_prometheus_does():
    inf = float("inf")
    buckets = [(0.1, 10.0), (0.2, 30.0), (0.4, 40.0), (inf, 40.0)]
    assert histogram_quantile(0.25, buckets) == pytest.approx(0.1)  # rank 10: first bound
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.15)  # rank 20: half of (0.1, 0.2]
    assert histogram_quantile(0.1, buckets) == pytest.approx(0.04)  # from 0 inside the first
    assert histogram_quantile(0.99, [(0.1, 1.0), (inf, 3.0)]) == pytest.approx(0.1)  # +Inf
    assert histogram_quantile(0.5, [(0.1, 0.0), (inf, 0.0)]) is None


def test_http_figures_read_the_exposition_text_per_view():
    registry = CollectorRegistry()
    seconds = Histogram("http_request_duration_seconds", "t", ["view", "method", "status"],
                        namespace="memory_console", buckets=LATENCY_BUCKETS, registry=registry)
    for value, status in [(0.002, "200")] * 8 + [(0.02, "404"), (0.3, "500")]:
        seconds.labels(view="api-1.0.0:recall", method="POST", status=status).observe(value)
    seconds.labels(view="console:usage", method="GET", status="200").observe(0.004)
    figures = http_figures(generate_latest(registry).decode())
    assert [(f.view, f.requests, f.client_errors, f.server_errors) for f in figures] == [
        ("api-1.0.0:recall", 10, 1, 1), ("console:usage", 1, 0, 0)]
    recall = figures[0]
    assert 1.0 < recall.p50_ms <= 2.5 and 25 < recall.p95_ms <= 500


def test_day_charts_scale_to_a_round_top_and_break_lines_at_missing_days():
    assert [nice_top(v) for v in (0, 3, 7, 12, 240)] == [1, 5, 10, 20, 250]
    days = [dt.date(2026, 12, 1) + dt.timedelta(days=i) for i in range(4)]
    bars = bar_chart("Recalls", days, [0, 5, 10, 2], "#000")
    heights = [float(b["h"]) for b in bars.bars]
    assert heights[0] == 0 and heights[2] == pytest.approx(bars.plot["h"])
    assert heights[1] == pytest.approx(heights[2] / 2)
    assert [t["text"] for t in bars.y_ticks] == ["0", "5", "10"]
    lines = line_chart("Time", days, {"p50": ([1.0, None, 2.0, 3.0], "#111")})
    assert [len(line["points"].split()) for line in lines.lines] == [1, 2]
    assert lines.lines[0]["single"] and lines.legend == [{"label": "p50", "colour": "#111"}]


def test_usage_counts_recalls_per_token_and_day_and_writes_per_user(editor, viewer,
                                                                      viewer_client):
    create("Pia grows tomatoes", actor=editor)
    create("Pia sells tomatoes at the market", user_id="u-b", actor=editor)
    bot = ApiClient(editor, name="support-bot")
    other = ApiClient(viewer)
    ids = [recall_answer(bot, "tomatoes")["recall_id"] for _ in range(3)] + [
        recall_answer(other, "Pia", user_id="u-b")["recall_id"]]
    viewer_client.get("/search/", {"user_id": "u-a", "q": "tomatoes"})
    figures = usage(days=7)
    today = figures.days[-1]
    assert today.day == timezone.localdate() and len(figures.days) == 7
    assert (today.recalls, today.writes) == (5, 2)
    unnamed = ApiToken.objects.get(pk=Recall.objects.get(recall_id=ids[3]).token_id)
    assert figures.recalls_by_token == [("support-bot (eddie)", "u-a", 3),
                                        ("console", "u-a", 1),
                                        (f"{unnamed.prefix}… (vera)", "u-b", 1)]
    assert sorted(figures.writes_by_user) == [("eddie", "u-a", 1), ("eddie", "u-b", 1)]

    # Percentiles are exact nearest-rank values of the day's recall times.
    for took, rid in zip((1.0, 2.0, 3.0, 10.0), ids, strict=True):
        Recall.objects.filter(recall_id=rid).update(took_ms=took)
    Recall.objects.filter(interface="console").update(took_ms=4.0)
    only_a = usage(days=7, user_id="u-a").days[-1]
    assert (only_a.recalls, only_a.p50_ms, only_a.p95_ms) == (4, 2.0, 4.0)

    # A recall three days ago lands on its own day.
    Recall.objects.filter(recall_id=ids[0]).update(
        at=timezone.now() - dt.timedelta(days=3))
    by_day = {d.day: d.recalls for d in usage(days=7).days}
    assert by_day[timezone.localdate() - dt.timedelta(days=3)] == 1
    assert by_day[timezone.localdate()] == 4


def test_the_page_draws_the_charts_and_tables_and_refuses_bad_filters(editor,
                                                                       viewer_client):
    create("Quinn collects vinyl", actor=editor)
    recall_answer(ApiClient(editor, name="crawler"), "vinyl")
    page = viewer_client.get("/usage/", {"days": "7"})
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('class="day-chart card"') == 3
    assert "crawler (eddie)" in html and "Recalls per day" in html
    assert 'id="usage-http"' in html
    partial = viewer_client.get("/usage/", {"days": "7"}, headers={"HX-Request": "true"})
    assert partial.content.decode().lstrip().startswith('<div id="usage">')
    bad = viewer_client.get("/usage/", {"days": "5"})
    assert bad.status_code == 400 and "days" in bad.content.decode().lower()
    assert viewer_client.get("/usage/", {"days": "30"}).status_code == 200
