"""Readers of the recall log and its feedback. Each reader first catches the log up
(``recalls.log.recall_log_flush``), so a trace reads back as soon as its recall answered."""

import dataclasses
import datetime as dt
import logging

from django.db.models import Count, Max, Q, QuerySet

from memories import store
from recalls.log import recall_log_flush
from recalls.models import Recall, RecallFeedback, RecallResult

log = logging.getLogger(__name__)


def caught_up() -> None:
    """Write the buffered traces now. Redis unreachable: the log is read as it stands (the
    traces wait in Redis)."""
    try:
        recall_log_flush()
    except store.RedisError as exc:
        log.warning("recall log not caught up: %s", type(exc).__name__)


@dataclasses.dataclass(frozen=True)
class RecallFilter:
    """What a list of recalls keeps. ``user_ids``: the namespaces (None: every one);
    ``agents``: a token's agents (empty: any) — a restricted reader also sees the recalls
    it made itself (``own``); ``q``: words all found in the query (case folded)."""

    user_ids: tuple[str, ...] | None = None
    agent_id: str | None = None
    actor: str | None = None
    interface: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    q: str = ""
    agents: tuple[str, ...] = ()
    own: str | None = None

    def rows(self) -> QuerySet:
        rows = Recall.objects.all()
        if self.user_ids is not None:
            rows = rows.filter(user_id__in=self.user_ids)
        if self.agents:
            rows = rows.filter(Q(agent_id__in=self.agents) | Q(actor=self.own or ""))
        for name in ("agent_id", "actor", "interface"):
            value = getattr(self, name)
            if value:
                rows = rows.filter(**{name: value})
        if self.since:
            rows = rows.filter(at__gte=self.since)
        if self.until:
            rows = rows.filter(at__lt=self.until)
        for word in self.q.split():
            rows = rows.filter(query__icontains=word)
        return rows


def recalls_matching(where: RecallFilter) -> QuerySet:
    """The recalls ``where`` keeps, newest first, results and feedback prefetched."""
    caught_up()
    return (where.rows().order_by("-at", "-recall_id")
            .prefetch_related("results", "feedback"))


def recall_find(recall_id: str) -> Recall | None:
    """One recall with its results (rank order) and feedback, or None."""
    caught_up()
    return (Recall.objects.filter(recall_id=recall_id)
            .prefetch_related("results", "feedback").first())


@dataclasses.dataclass
class MemoryRecalls:
    """How a memory was recalled: ``count`` traced recalls, the ``last`` one (or None) and
    the ``recent`` ones (newest first), each with the rank it had."""

    count: int
    last: Recall | None
    recent: list[tuple[Recall, int]]


def memory_recalls(memory_id: str, *, recent: int = 10) -> MemoryRecalls:
    """The traced recalls that answered ``memory_id`` (within the log's retention)."""
    caught_up()
    rows = RecallResult.objects.filter(memory_id=memory_id)
    count = rows.count()
    latest = list(rows.select_related("recall").order_by("-recall__at")[:recent])
    pairs = [(r.recall, r.rank) for r in latest]
    return MemoryRecalls(count=count, last=pairs[0][0] if pairs else None, recent=pairs)


def feedback_for(user_id: str, queries: list[str] | None = None) -> QuerySet:
    """Feedback of namespace ``user_id`` (on ``queries`` only, when given), newest first."""
    rows = RecallFeedback.objects.filter(user_id=user_id)
    return rows.filter(query__in=queries) if queries is not None else rows


def feedback_queries(user_id: str) -> list[tuple[str, int]]:
    """The queries of ``user_id`` that received feedback, with how many results were graded,
    most graded first."""
    rows = (RecallFeedback.objects.filter(user_id=user_id).exclude(query="")
            .values("query").annotate(n=Count("id"), last=Max("updated_at"))
            .order_by("-n", "-last"))
    return [(r["query"], r["n"]) for r in rows]
