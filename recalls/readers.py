"""Readers of the recall log and its feedback. Each reader first catches the log up
(``recalls.log.recall_log_flush``), so a trace reads back as soon as its recall answered."""

import dataclasses
import datetime as dt
import logging

from django.db.models import Count, IntegerField, Max, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from memories import store
from memories.history import MARKER_KINDS
from memories.models import Memory
from recalls.log import recall_log_flush
from recalls.models import Recall, RecallFeedback, RecallResult

log = logging.getLogger(__name__)


# The most batches a reader writes before reading (the worker's job writes a larger backlog).
READER_BATCHES = 5


def caught_up() -> None:
    """Write the buffered traces now, at most ``READER_BATCHES`` batches of them. Redis
    unreachable: the log is read as it stands (the traces wait in Redis)."""
    try:
        recall_log_flush(batches=READER_BATCHES)
    except store.RedisError as exc:
        log.warning("recall log not caught up: %s", type(exc).__name__)


@dataclasses.dataclass(frozen=True)
class RecallFilter:
    """What a list of recalls keeps. ``user_ids``: the namespaces (None: every one);
    ``agents``: a token's agents (empty: any) — a restricted reader also sees the recalls
    its token made (``own_token``: the token's id; not its user's other tokens' nor the
    console's); ``q``: words all found in the query (case folded)."""

    user_ids: tuple[str, ...] | None = None
    agent_id: str | None = None
    actor: str | None = None
    interface: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    q: str = ""
    agents: tuple[str, ...] = ()
    own_token: int | None = None

    def rows(self) -> QuerySet:
        rows = Recall.objects.all()
        if self.user_ids is not None:
            rows = rows.filter(user_id__in=self.user_ids)
        if self.agents:
            own = Q(token_id=self.own_token) if self.own_token is not None else Q(pk__in=[])
            rows = rows.filter(Q(agent_id__in=self.agents) | own)
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


def _existing_results() -> Prefetch:
    """A recall's results whose memory exists: a trace written while its memory's purge was
    committing can keep a row of it (``RecallResult.memory`` has no database constraint);
    the join leaves it out."""
    return Prefetch("results", queryset=RecallResult.objects.filter(
        memory__user_id__isnull=False))


def recalls_matching(where: RecallFilter) -> QuerySet:
    """The recalls ``where`` keeps, newest first, results and feedback prefetched."""
    caught_up()
    return (where.rows().order_by("-at", "-recall_id")
            .prefetch_related(_existing_results(), "feedback"))


def recall_find(recall_id: str) -> Recall | None:
    """One recall with its results (rank order) and feedback, or None."""
    caught_up()
    return (Recall.objects.filter(recall_id=recall_id)
            .prefetch_related(_existing_results(), "feedback").first())


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


def recalls_listed(where: RecallFilter) -> QuerySet:
    """:func:`recalls_matching` for a list page: newest first, each recall with
    ``n_results`` and ``n_feedback`` (counted per row of the page by a subquery, not by
    loading every result)."""
    caught_up()

    def counted(model) -> Coalesce:
        rows = (model.objects.filter(recall=OuterRef("pk")).order_by().values("recall")
                .annotate(n=Count("*")).values("n"))
        return Coalesce(Subquery(rows, output_field=IntegerField()), 0)

    return (where.rows().order_by("-at", "-recall_id")
            .annotate(n_results=counted(RecallResult), n_feedback=counted(RecallFeedback)))


@dataclasses.dataclass
class Served:
    """One result of a recall as it was served, and what became of its memory since.

    ``text``: the memory's text at the version served (None when its history no longer
    holds that version); ``memory``: the memory now (the result goes with it on a purge);
    ``edited_to``: the current version when a version after the one served changed the
    memory (a marker such as forget or supersede does not count: it has its own mark),
    else None; ``forgotten``, ``ended`` (its validity ended, by supersession or not)."""

    result: RecallResult
    text: str | None
    memory: Memory
    edited_to: int | None
    forgotten: bool
    ended: bool


def served_results(recall: Recall, *, now: dt.datetime | None = None) -> list[Served]:
    """``recall``'s results in rank order, each with its text at the version served and its
    marks against ``now`` (default the clock). Three queries whatever the number of
    results: the memories, the versions served, the later versions' numbers."""
    results = sorted(recall.results.all(), key=lambda r: r.rank)
    if not results:
        return []
    now = now or dt.datetime.now(dt.UTC)
    ids = {r.memory_id for r in results}
    memories = Memory.objects.defer("context", "keywords", "content_folded").in_bulk(ids)
    served = Q()
    for r in results:
        served |= Q(memory_id=r.memory_id, version=r.version)
    texts = {}
    # Several rows may share a version number; the last one written is that version.
    for memory_id, version, content in (Memory.history.filter(served)
                                        .order_by("history_id")
                                        .values_list("memory_id", "version", "content")):
        texts[(memory_id, version)] = content
    changed: dict[str, list[int]] = {}
    for memory_id, version in (Memory.history.filter(memory_id__in=ids)
                               .exclude(kind__in=MARKER_KINDS)
                               .values_list("memory_id", "version")):
        changed.setdefault(memory_id, []).append(version)
    out = []
    for r in results:
        memory = memories.get(r.memory_id)
        if memory is None:  # purged between the two reads: its result is gone too
            continue
        edited = any(v > r.version for v in changed.get(r.memory_id, ()))
        out.append(Served(
            result=r, text=texts.get((r.memory_id, r.version)), memory=memory,
            edited_to=memory.version if edited else None,
            forgotten=memory.deleted_at is not None,
            ended=memory.valid_until is not None and memory.valid_until <= now))
    return out
