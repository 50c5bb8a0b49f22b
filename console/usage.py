"""What the Usage page shows: recalls and writes per day, per token and per namespace, and
recall latency per day, over the last days (at most the recall log's retention).

Recalls come from the recall log (``recalls``): one trace per recall, with its API token
(null from the console) and its engine time ``took_ms``. Writes are memory versions (the
memory history): each is recorded under its user, not its token, so writes are counted
per user. HTTP latency and errors per view come from the metrics
(``integrations.metrics.http_figures``).
"""

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from accounts.models import ApiToken
from memories.models import Memory
from recalls.models import Recall
from recalls.readers import caught_up

ROWS = 50  # rows of each breakdown table


@dataclass
class Day:
    """One day: ``recalls``, ``writes``, recall engine time ``p50_ms`` / ``p95_ms``
    (milliseconds; None without recalls)."""

    day: dt.date
    recalls: int = 0
    writes: int = 0
    p50_ms: float | None = None
    p95_ms: float | None = None


@dataclass
class Usage:
    days: list[Day]
    # (token label, namespace, recalls), busiest first; the console's own searches are
    # the token label "console".
    recalls_by_token: list[tuple[str, str, int]] = field(default_factory=list)
    # (user, namespace, memory versions written), busiest first.
    writes_by_user: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def active(self) -> bool:
        """Whether any day saw a recall or a write."""
        return any(d.recalls or d.writes for d in self.days)


def _day_counts(rows, date_field: str) -> dict[dt.date, int]:
    return {r["day"]: r["n"] for r in rows.annotate(day=TruncDate(date_field))
            .values("day").annotate(n=Count("pk")).order_by()}


def _percentile(rows, n: int, q: float) -> float | None:
    """The nearest-rank ``q`` percentile (0..1) of ``took_ms`` over ``rows`` (``n`` of
    them): one indexed read at its offset."""
    if not n:
        return None
    offset = max(0, min(n - 1, int(q * n + 0.999999) - 1))
    return rows.order_by("took_ms").values_list("took_ms", flat=True)[offset]


def _token_labels(ids: set[int]) -> dict[int, str]:
    return {t.pk: f"{t.name or t.prefix + '…'} ({t.user.get_username()})"
            for t in ApiToken.objects.filter(pk__in=ids).select_related("user")}


def usage(*, days: int, user_id: str | None = None) -> Usage:
    """The last ``days`` days (today included, in the server's time zone) of namespace
    ``user_id`` (None: every namespace)."""
    caught_up()
    zone = timezone.get_current_timezone()
    today = timezone.localdate()
    first = today - dt.timedelta(days=days - 1)
    start = dt.datetime.combine(first, dt.time(), zone)
    recalls = Recall.objects.filter(at__gte=start)
    writes = Memory.history.filter(history_date__gte=start)
    if user_id:
        recalls, writes = recalls.filter(user_id=user_id), writes.filter(user_id=user_id)
    recall_days, write_days = _day_counts(recalls, "at"), _day_counts(writes, "history_date")
    out = []
    for i in range(days):
        day = first + dt.timedelta(days=i)
        row = Day(day=day, recalls=recall_days.get(day, 0), writes=write_days.get(day, 0))
        if row.recalls:
            since = dt.datetime.combine(day, dt.time(), zone)
            of_day = recalls.filter(at__gte=since, at__lt=since + dt.timedelta(days=1))
            row.p50_ms = _percentile(of_day, row.recalls, 0.5)
            row.p95_ms = _percentile(of_day, row.recalls, 0.95)
        out.append(row)
    by_token = list(recalls.values("token_id", "user_id").annotate(n=Count("pk"))
                    .order_by("-n", "user_id")[:ROWS])
    labels = _token_labels({r["token_id"] for r in by_token if r["token_id"]})
    by_user = (writes.values("changed_by", "user_id").annotate(n=Count("pk"))
               .order_by("-n", "user_id")[:ROWS])
    return Usage(
        days=out,
        recalls_by_token=[(labels.get(r["token_id"], "console" if r["token_id"] is None
                                      else f"token #{r['token_id']}"), r["user_id"], r["n"])
                          for r in by_token],
        writes_by_user=[(r["changed_by"], r["user_id"], r["n"]) for r in by_user])
