"""The HTTP figures of ``/metrics`` summarised for a person: per view, requests, client and
server errors, and latency p50/p95, over the life of the server's processes.

Read from the same exposition text Prometheus scrapes (``exposition.render``), parsed with
prometheus-client's own parser, so the console and a dashboard agree.
"""

from collections import defaultdict
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from integrations.metrics.exposition import render
from integrations.metrics.registry import NAMESPACE

REQUESTS = f"{NAMESPACE}_http_request_duration_seconds"


@dataclass
class ViewFigures:
    """One view (URL pattern): ``requests``, ``client_errors`` (4xx), ``server_errors``
    (5xx), and ``p50_ms`` / ``p95_ms`` in milliseconds (None without requests)."""

    view: str
    requests: int
    client_errors: int
    server_errors: int
    p50_ms: float | None
    p95_ms: float | None


def histogram_quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """The ``q`` quantile (0..1) of a histogram's cumulative ``buckets`` ``[(upper bound,
    count)]`` sorted by bound, the last ``inf``: linear interpolation inside the bucket
    that holds the rank, as Prometheus' ``histogram_quantile`` computes it (the first
    bucket's lower bound is 0; a rank in the ``+Inf`` bucket answers the highest finite
    bound). None when the histogram is empty."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if bound == float("inf"):
                return lower_bound
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (
                count - lower_count)
        lower_bound, lower_count = bound, count
    return lower_bound


def http_figures(text: str | None = None) -> list[ViewFigures]:
    """Per view, from the exposition ``text`` (default: this server's ``/metrics`` now),
    busiest first."""
    text = render().decode() if text is None else text
    buckets: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for family in text_string_to_metric_families(text):
        if family.name != REQUESTS:
            continue
        for sample in family.samples:
            view = sample.labels.get("view", "")
            if sample.name.endswith("_bucket"):
                buckets[view][float(sample.labels["le"])] += sample.value
            elif sample.name.endswith("_count"):
                status = sample.labels.get("status", "")
                counts[view]["all"] += sample.value
                counts[view][status[:1]] += sample.value
    out = []
    for view, c in counts.items():
        cumulative = sorted(buckets[view].items())
        p50, p95 = (histogram_quantile(q, cumulative) for q in (0.5, 0.95))
        out.append(ViewFigures(
            view=view, requests=int(c["all"]), client_errors=int(c["4"]),
            server_errors=int(c["5"]),
            p50_ms=None if p50 is None else p50 * 1000, p95_ms=None if p95 is None else p95 * 1000))
    return sorted(out, key=lambda f: (-f.requests, f.view))
