"""The recall log's writer: a trace per recall, buffered in Redis, written in batches.

A recall must not write the database (see ``memories.access``): :func:`recall_log` only
appends the trace, as one JSON line, to a Redis list (one ``RPUSH``), and answers its
``recall_id`` at once. :func:`recall_log_flush` moves the list into the database in
batches: the periodic job does every ``MEMORY_RECALL_LOG_FLUSH_SECONDS``, and every reader
of the log (the API, the console) does first, so a trace reads back as soon as its recall
answered, with or without a worker. Flushes take a Redis lock in turn; a batch is written,
then trimmed from the list, and written again harmlessly after a crash between the two (the
trace's primary key and its results' ``(recall, rank)`` refuse a second copy).

Never fails a recall: a Redis error while buffering is counted (``recall_log_traces``
outcome ``failed``) and the recall answers ``recall_id`` null. At most
``MEMORY_RECALL_LOG_BUFFER`` traces wait; beyond, the oldest go (outcome ``dropped``).
Memory text is never copied: results are memory ids, versions, ranks, scores and the
explain's figures. With ``MEMORY_RECALL_LOG_REDACT_QUERY`` the query text, the matched
terms and the words its time range came from are dropped before buffering.
"""

import bisect
import datetime as dt
import logging
import random
import secrets

import orjson
from django.conf import settings
from django.db import DatabaseError, transaction
from redis.exceptions import LockError

from integrations.metrics.registry import count_recall_log
from memories import store
from memories.models import Memory
from recalls.models import RECALL_ID_RE, Recall, RecallResult
from search.models import RankingProfile
from search.results import SearchResult

log = logging.getLogger(__name__)

INTERFACES = ("rest", "mcp", "console", "python", "typescript", "langgraph")
BATCH = 1000  # traces per database transaction
LOCK_SECONDS = 60  # a flush's lock lapses after this if its holder died
CHUNK = 500  # ids per IN (SQLite's bound on a statement's parameters)


def _buffer_key() -> str:
    return store.global_key("recalls:buffer")


def _lock_key() -> str:
    return store.global_key("recalls:flush")


def new_recall_id() -> str:
    """``rc_`` + 16 lowercase hex digits (64 random bits)."""
    return f"rc_{secrets.token_hex(8)}"


def _sampled() -> bool:
    share = settings.MEMORY_RECALL_LOG_SAMPLE
    return share >= 1 or (share > 0 and random.random() < share)  # noqa: S311 - sampling


def _figure(value: float) -> float:
    """An explain figure as the trace keeps it: 4 significant digits (it is read by people;
    the score itself is kept whole)."""
    return float(f"{value:.4g}")


def _result(rank: int, hit, redact: bool) -> dict:
    """One result as the trace keeps it: the explain's figures only where they say
    something (no semantic part: absent; a time factor of 1: absent)."""
    e = hit.explain
    explain = {"bm25": _figure(e.bm25), "relevance": _figure(e.relevance),
               "recency": _figure(e.recency), "importance": _figure(e.importance)}
    if e.semantic is not None:
        explain["semantic"] = _figure(e.semantic)
    if e.time != 1.0:
        explain["time"] = _figure(e.time)
    if not redact:
        explain["terms"] = {term: _figure(share) for term, share in e.terms.items()}
        if e.context_terms:
            explain["context_terms"] = e.context_terms
    return {"memory_id": hit.memory_id, "rank": rank, "version": hit.version,
            "score": hit.score, "explain": explain}


def recall_log(*, found: SearchResult, user_id: str, actor: str, interface: str,
               query: str, agents: list[str], filters: dict,
               token_id: int | None = None, at: dt.datetime | None = None) -> str | None:
    """Buffer the trace of one recall of namespace ``user_id`` that answered ``found``.

    ``actor``: the username of the token's (or console session's) user; ``token_id`` the
    API token's id (None: the console); ``interface`` one
    of ``INTERFACES``; ``agents`` the agents the recall kept (the trace's ``agent_id`` is
    the one agent when it names exactly one, else none); ``filters`` the filters and options
    it applied, JSON-ready; ``at`` when it happened (default now: the demo's loader dates
    its recalls in the past). Returns the ``recall_id``, or None when this recall is not
    traced (sampled out, or Redis refused). Never raises ``RedisError``.
    """
    if not _sampled():
        return None
    redact = settings.MEMORY_RECALL_LOG_REDACT_QUERY
    recall_id = new_recall_id()
    record = {
        "recall_id": recall_id, "at": (at or dt.datetime.now(dt.UTC)).isoformat(),
        "user_id": user_id, "actor": actor, "token_id": token_id, "interface": interface,
        "agent_id": agents[0] if len(agents) == 1 else "",
        # NUL: no PostgreSQL text holds it.
        "query": "" if redact else query.replace("\x00", "\ufffd"), "filters": filters,
        # Its "from" is the query's own words ("in May 2024"): redacted with the query.
        "time_range": ({k: v for k, v in found.time.items() if k != "from"}
                       if redact and found.time else found.time),
        "profile": found.profile, "match_mode": found.match_mode_used,
        "took_ms": found.took_ms,
        "results": [_result(rank, hit, redact) for rank, hit in enumerate(found.results, 1)],
    }
    try:
        # orjson: the stdlib's encoder was most of a trace's cost on the recall's path.
        line = orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY)
        client = store.get_client()
        waiting = client.rpush(_buffer_key(), line)
        excess = waiting - settings.MEMORY_RECALL_LOG_BUFFER
        if excess > 0:
            client.ltrim(_buffer_key(), excess, -1)
            count_recall_log("dropped", excess)
    except (store.RedisError, TypeError) as exc:  # TypeError: a value JSON cannot hold
        count_recall_log("failed")
        log.warning("recall not traced: %s", type(exc).__name__)
        return None
    count_recall_log("buffered")
    return recall_id


def recall_log_flush(*, wait_seconds: float = 2.0, batches: int | None = None) -> int:
    """Write the buffered traces to the database, oldest first, ``BATCH`` per transaction:
    all of them, or at most ``batches`` batches (a reader's bound: a request never writes
    an unbounded backlog, the worker's job does). Returns how many were written. Waits up
    to ``wait_seconds`` for another flush's lock (then returns 0: that flush writes them).
    A trace that does not parse, or not to a trace's shape, is logged and skipped.
    Raises ``RedisError``."""
    client = store.get_client()
    if not client.llen(_buffer_key()):
        return 0
    lock = client.lock(_lock_key(), timeout=LOCK_SECONDS, blocking_timeout=wait_seconds)
    if not lock.acquire():
        return 0
    written, done = 0, 0
    try:
        while (batches is None or done < batches) and (
                raw := client.lrange(_buffer_key(), 0, BATCH - 1)):
            written += _write(raw)
            if not lock.owned():  # it lapsed: another flush may have trimmed these lines
                log.warning("recall log flush outlived its lock; its batch is left")
                break  # trimming would drop traces no flush wrote; a rewrite is harmless
            client.ltrim(_buffer_key(), len(raw), -1)
            lock.reacquire()  # a full lock's time for the next batch
            done += 1
            if len(raw) < BATCH:
                break
    finally:
        try:
            lock.release()
        except LockError:  # it lapsed: its last batch was left to be written again
            log.warning("recall log flush outlived its lock")
    count_recall_log("written", written)
    return written


def _is(value, *kinds) -> bool:
    """Whether ``value`` is one of ``kinds`` (a bool is no number)."""
    return isinstance(value, kinds) and not isinstance(value, bool)


# A trace's fields and the types it must hold (``recall_log`` writes them so; a line of
# another shape, from another version or another writer, is skipped, never written).
SHAPE = {"recall_id": (str,), "user_id": (str,), "actor": (str,), "interface": (str,),
         "profile": (str,), "query": (str,), "agent_id": (str,), "match_mode": (str,),
         "took_ms": (int, float), "filters": (dict,), "results": (list,)}
RESULT_SHAPE = {"memory_id": (str,), "rank": (int,), "version": (int,),
                "score": (int, float), "explain": (dict,)}


def _shaped(record) -> bool:
    """Whether ``record`` has a trace's shape (fields and results of the right types)."""
    return (isinstance(record, dict) and RECALL_ID_RE.match(str(record.get("recall_id")))
            and all(_is(record.get(f), *kinds) for f, kinds in SHAPE.items())
            and (record.get("token_id") is None or _is(record["token_id"], int))
            and (record.get("time_range") is None or _is(record["time_range"], dict))
            and all(isinstance(res, dict) and all(_is(res.get(f), *kinds)
                                                  for f, kinds in RESULT_SHAPE.items())
                    for res in record["results"]))


def _parse(line) -> dict | None:
    try:
        record = orjson.loads(line)
        if not _shaped(record):
            raise ValueError("not a trace's shape")
        at = dt.datetime.fromisoformat(record["at"])
        record["at"] = at if at.tzinfo else at.replace(tzinfo=dt.UTC)
        return record
    except (ValueError, TypeError, KeyError) as exc:
        log.error("recall trace skipped, unreadable: %s", exc)
        return None


def _live(memory_ids: set[str]) -> set[str]:
    """Those of ``memory_ids`` still in the database (a result of a memory purged since
    its recall is not written)."""
    ids, out = sorted(memory_ids), set()
    for start in range(0, len(ids), CHUNK):
        out.update(Memory.objects.filter(memory_id__in=ids[start:start + CHUNK])
                   .values_list("memory_id", flat=True))
    return out


def _profile_versions(records: list[dict]) -> None:
    """Set each record's ``profile_version``: the number of its profile's versions saved
    by its time (one query per profile named)."""
    for name in {r["profile"] for r in records}:
        dates = sorted(RankingProfile.history.filter(name=name)
                       .values_list("history_date", flat=True))
        for r in records:
            if r["profile"] == name:
                # A trace dated before the profile's first saved version (the demo's, replayed
                # in the past) was served by that first version.
                r["profile_version"] = max(bisect.bisect_right(dates, r["at"]), 1) if dates \
                    else None


FIELDS = ("recall_id", "at", "user_id", "actor", "token_id", "agent_id", "interface", "query", "filters",
          "time_range", "profile", "profile_version", "match_mode", "took_ms")


def _write(lines: list) -> int:
    """Write the traces of ``lines``; a batch the database refuses is written one trace at
    a time, and a trace it still refuses is logged and skipped. Returns how many were
    written."""
    records = [r for r in map(_parse, lines) if r is not None]
    _profile_versions(records)
    live = _live({res["memory_id"] for r in records for res in r["results"]})
    try:
        _insert(records, live)
        return len(records)
    except (DatabaseError, ValueError, TypeError):
        log.warning("recall trace batch refused; writing its traces one by one")
    written = 0
    for record in records:
        try:
            _insert([record], live)
            written += 1
        except (DatabaseError, ValueError, TypeError) as exc:
            log.error("recall trace %s skipped: %s", record.get("recall_id"), exc)
    return written


def _insert(records: list[dict], live: set[str]) -> None:
    with transaction.atomic():
        Recall.objects.bulk_create([Recall(**{f: r.get(f) for f in FIELDS}) for r in records],
                                   ignore_conflicts=True, batch_size=CHUNK)
        RecallResult.objects.bulk_create(
            [RecallResult(recall_id=r["recall_id"], memory_id=res["memory_id"],
                          rank=res["rank"], version=res["version"], score=res["score"],
                          explain=res["explain"])
             for r in records for res in r["results"] if res["memory_id"] in live],
            ignore_conflicts=True, batch_size=CHUNK)


def _delete_traces(rows) -> int:
    """Delete the traces of queryset ``rows``, ``CHUNK`` per transaction, with their
    results; their feedback stays (its ``recall`` set null). Returns how many went."""
    gone = 0
    while ids := list(rows.values_list("recall_id", flat=True)[:CHUNK]):
        with transaction.atomic():
            Recall.objects.filter(recall_id__in=ids).delete()
        gone += len(ids)
    return gone


def recall_log_expire(*, days: int | None = None, now: dt.datetime | None = None) -> int:
    """Delete traces older than ``days`` (default ``MEMORY_RECALL_LOG_DAYS``), with their
    results; feedback stays. Returns how many traces went."""
    days = settings.MEMORY_RECALL_LOG_DAYS if days is None else days
    cutoff = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=days)
    return _delete_traces(Recall.objects.filter(at__lt=cutoff))


def recall_log_drop(*, user_ids: list[str]) -> int:
    """Delete every trace of the namespaces ``user_ids`` (buffered ones are written first),
    with their results; their feedback stays. Returns how many went. Raises ``RedisError``."""
    recall_log_flush()
    return _delete_traces(Recall.objects.filter(user_id__in=user_ids))
