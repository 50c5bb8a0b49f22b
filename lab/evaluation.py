"""Evaluation of a ranking profile on judged queries: nDCG@k, P@k, recall@k, MRR, and the
rank-biased overlap of two result lists."""

import contextlib
import math
import secrets
import time
from collections.abc import Mapping, Sequence

from django.conf import settings

from memories import store
from memories.errors import Busy, InvalidInput, TooLarge
from memories.validation import clean_identifier
from search import ranking_metrics as ir
from search.memory_search import memory_search
from search.profiles import profile_resolve

# What one request may ask for: each bound is a 400 naming the field. The time a request's
# searches may take together is bounded too (``Deadline``).
K_MAX = 100
QUERY_MAX_CHARS = 1000
QUERIES_MAX = 500
RELEVANT_MAX = 1000  # labelled memories of one query

RBO_P = 0.9

METRICS = ("ndcg", "precision", "recall", "mrr")


def clean_query(value, field: str = "query") -> str:
    """A query as judgments key it: white space collapsed, 1-1000 characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    value = " ".join(value.split())
    if not value:
        raise InvalidInput(f"{field} must not be blank", field=field)
    if len(value) > QUERY_MAX_CHARS:
        raise InvalidInput(f"{field} must be at most {QUERY_MAX_CHARS} characters", field=field)
    return value


def clean_k(value, field: str = "k") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= K_MAX:
        raise InvalidInput(f"{field} must be an integer 1..{K_MAX}", field=field)
    return value


class Deadline:
    """The time one evaluation (``evaluate``, a run) may hold the worker that serves it:
    ``MEMORY_EVALUATION_SECONDS`` of wall clock from its first search. Checked after each
    search, so it stops within one search of the limit rather than answering late.

    Used as a context manager, it also holds one of ``MEMORY_EVALUATIONS_AT_ONCE`` slots
    shared by every process (a sorted set in Redis, each slot leased for the deadline plus
    a margin, so a crashed process frees its slot): more evaluations at once would hold as
    many worker threads and slow every other request. Entering raises Busy (429, naming
    ``field``, ``retry_after_seconds``) when every slot is taken."""

    LEASE_MARGIN_SECONDS = 5

    def __init__(self, *, field: str):
        self.field = field
        self.seconds = settings.MEMORY_EVALUATION_SECONDS
        self.ends = time.monotonic() + self.seconds
        self._slot = None

    def __enter__(self):
        client = store.get_client()
        key = store.global_key("evaluations")
        slot = secrets.token_hex(8)
        now = time.time()
        pipe = client.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zadd(key, {slot: now + self.seconds + self.LEASE_MARGIN_SECONDS})
        pipe.zcard(key)
        pipe.expire(key, int(self.seconds + self.LEASE_MARGIN_SECONDS) + 1)
        held = pipe.execute()[2]
        if held > settings.MEMORY_EVALUATIONS_AT_ONCE:
            client.zrem(key, slot)
            raise Busy(f"{settings.MEMORY_EVALUATIONS_AT_ONCE} evaluations are running "
                       "(MEMORY_EVALUATIONS_AT_ONCE): try again shortly", field=self.field,
                       retry_after_seconds=int(self.seconds) or 1)
        self._slot = (key, slot)
        self.ends = time.monotonic() + self.seconds
        return self

    def __exit__(self, *exc):
        if self._slot is not None:
            with contextlib.suppress(store.RedisError):  # else its lease ends by itself
                store.get_client().zrem(*self._slot)
            self._slot = None

    def check(self, *, done: int, total: int) -> None:
        """Raise TooLarge (413) naming ``field``, with ``limit_seconds``, ``done`` and
        ``total`` (searches), when the time is up and searches remain."""
        if done < total and time.monotonic() >= self.ends:
            raise TooLarge(
                f"the evaluation stopped after {done} of {total} searches, at its "
                f"{self.seconds:g}-second limit (MEMORY_EVALUATION_SECONDS): ask for fewer "
                "queries, profiles or a smaller k at a time",
                field=self.field, limit_seconds=self.seconds, done=done, total=total)


def query_metrics(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> dict:
    """nDCG@k (graded gains), P@k, recall@k and MRR within the top k of one ranking."""
    return {
        "ndcg": ir.ndcg_at_k(ranked, gains, k),
        "precision": ir.precision_at_k(ranked, gains, k),
        "recall": ir.recall_at_k(ranked, gains, k),
        "mrr": ir.mrr_at_k(ranked, gains, k),
    }


def live_figures(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> dict:
    """What the compare page shows above a column as grades come in (as Quepid does):
    ``{"ndcg", "precision"}`` (nDCG@k with graded gains, P@k; ``search.ranking_metrics``), both None
    while the query has no relevant grade (grade > 0), plus ``judged`` (results of the top
    k with a grade) and ``relevant`` (memories graded > 0 for the query, shown or not)."""
    top = list(dict.fromkeys(ranked))[:k]
    relevant = sum(1 for g in gains.values() if g > 0)
    return {
        "ndcg": ir.ndcg_at_k(top, gains, k) if relevant else None,
        "precision": ir.precision_at_k(top, gains, k) if relevant else None,
        "judged": sum(1 for m in top if m in gains),
        "relevant": relevant,
        "k": k,
    }


def mean_metrics(rows: Sequence[Mapping]) -> dict:
    """The mean of each metric over ``rows`` (0.0 each when there are none)."""
    n = len(rows)
    return {m: (math.fsum(r[m] for r in rows) / n if n else 0.0) for m in METRICS}


def _clean_relevant(value, field: str) -> dict[str, float]:
    """``[memory_id, ...]`` (each grade 1) or ``{memory_id: grade 0-3}``, at most
    ``RELEVANT_MAX`` of them."""
    if isinstance(value, list | tuple | Mapping) and len(value) > RELEVANT_MAX:
        raise InvalidInput(f"{field} takes at most {RELEVANT_MAX} memories", field=field)
    if isinstance(value, list | tuple):
        if not all(isinstance(v, str) for v in value):
            raise InvalidInput(f"{field} must list memory ids", field=field)
        return dict.fromkeys(value, 1.0)
    if isinstance(value, Mapping):
        out = {}
        for memory_id, grade in value.items():
            if (
                isinstance(grade, bool)
                or not isinstance(grade, int | float)
                or not (0 <= grade <= 3)
            ):
                raise InvalidInput(f"{field} grades must be 0..3", field=field)
            out[str(memory_id)] = float(grade)
        return out
    raise InvalidInput(f"{field} must be a list of memory ids or {{memory_id: grade}}", field=field)


def evaluate(*, profile, k: int, queries: Sequence[Mapping], now: float | None = None) -> dict:
    """Rank each query with ``profile`` (a name, a RankingProfile, saved or not) and measure
    the top ``k`` against the caller's relevance labels.

    Each query: ``{"user_id", "query", "conversation_id"?, "relevant"}``; ``relevant`` is a
    list of memory ids (grade 1 each) or ``{memory_id: grade 0-3}`` (nDCG uses the grade,
    the other metrics count grade > 0 as relevant). Returns ``{"k", "metrics", "per_query"}``;
    ``metrics`` are means over every query given, MRR is counted within the top k. Every
    query is checked before the first search. Raises NotFound (unknown profile), InvalidInput
    (naming the field: at most ``QUERIES_MAX`` queries of ``QUERY_MAX_CHARS`` characters,
    ``RELEVANT_MAX`` labels each, k 1..``K_MAX``), TooLarge (``queries``: past the
    ``Deadline``), ``redis.RedisError``.
    """
    prof = profile_resolve(profile)
    k = clean_k(k)
    if not isinstance(queries, list | tuple) or not queries:
        raise InvalidInput("queries must be a non-empty list", field="queries")
    if len(queries) > QUERIES_MAX:
        raise InvalidInput(f"queries takes at most {QUERIES_MAX} items", field="queries")
    checked = [_clean_item(item, f"queries.{i}") for i, item in enumerate(queries)]
    now = time.time() if now is None else now
    with Deadline(field="queries") as deadline:
        rows = []
        for user_id, conversation_id, query, gains in checked:
            found = memory_search(
                user_id=user_id,
                query=query,
                limit=k,
                profile=prof,
                conversation_id=conversation_id,
                now=now,
            )
            ranked = [h.memory_id for h in found.results]
            rows.append(
                {
                    "user_id": user_id,
                    "query": query,
                    "conversation_id": conversation_id,
                    **query_metrics(ranked, gains, k),
                    "results": ranked,
                    "relevant": sum(1 for g in gains.values() if g > 0),
                }
            )
            deadline.check(done=len(rows), total=len(checked))
    return {"k": k, "metrics": mean_metrics(rows), "per_query": rows}


def _clean_item(item, where: str) -> tuple[str, str | None, str, dict[str, float]]:
    """One query of ``evaluate``: ``(user_id, conversation_id, query, gains)``."""
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where} must be an object", field=where)
    user_id = clean_identifier(item.get("user_id"), f"{where}.user_id")
    conversation_id = clean_identifier(
        item.get("conversation_id"), f"{where}.conversation_id", required=False
    )
    query = item.get("query")
    if not isinstance(query, str) or len(query) > QUERY_MAX_CHARS:
        raise InvalidInput(f"{where}.query must be a string of at most {QUERY_MAX_CHARS} "
                           "characters", field=f"{where}.query")
    return user_id, conversation_id, query, _clean_relevant(item.get("relevant"),
                                                             f"{where}.relevant")


def compare_lists(a: Sequence[str], b: Sequence[str], k: int) -> dict:
    """How list ``b`` differs from list ``a`` (top ``k`` of each).

    ``moves[id]`` for each id of ``b``: ``{"kind": "up" | "down" | "same" | "new", "n"}``
    (``n`` ranks moved, relative to ``a``); ``dropped``: ids of ``a`` missing from ``b``;
    ``rank_a`` / ``rank_b``: 1-based ranks; plus Jaccard@k, RBO (p = 0.9) and ``shared``.
    """
    top_a, top_b = list(dict.fromkeys(a))[:k], list(dict.fromkeys(b))[:k]
    rank_a = {m: r for r, m in enumerate(top_a, start=1)}
    rank_b = {m: r for r, m in enumerate(top_b, start=1)}
    moves = {}
    for memory_id, rb in rank_b.items():
        ra = rank_a.get(memory_id)
        if ra is None:
            moves[memory_id] = {"kind": "new", "n": 0}
        elif ra > rb:
            moves[memory_id] = {"kind": "up", "n": ra - rb}
        elif ra < rb:
            moves[memory_id] = {"kind": "down", "n": rb - ra}
        else:
            moves[memory_id] = {"kind": "same", "n": 0}
    return {
        "moves": moves,
        "rank_a": rank_a,
        "rank_b": rank_b,
        "dropped": [m for m in top_a if m not in rank_b],
        "shared": len(rank_a.keys() & rank_b.keys()),
        "jaccard": ir.jaccard_at_k(top_a, top_b, k) if k >= 1 else 1.0,
        "rbo": ir.rbo(top_a, top_b, p=RBO_P),
    }

