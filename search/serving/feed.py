"""Keep each process's serving indexes (``engine.FieldIndex``) in line with Redis.

Redis stays the shared source: the index records (``v<sfx>:d:<id>``, one per memory, from
which each field's document is derived: ``search.index.fields.record_postings``) and the
statistics that ``put.lua`` maintains. A serving index of one field of one namespace is

- **built** from the records of the live generation, in bounded chunks (SSCAN of the
  namespace's ``ids`` set, ``BUILD_CHUNK`` records per pipeline in MGETs of ``MGET_KEYS``:
  no long command), after
  noting the write stream's position, then caught up from that position (an index of format
  6 or older: from each field's document vectors where no record replaced them yet);
- **caught up** before every search by ``feed.lua``: the stream entries after the last one
  applied (``FEED_COUNT`` at a time) and, atomically with them, the current record of each
  memory they name. ``put.lua`` appends the entry in the same script as the write, so a
  recall in any process sees every write that has returned (read-your-writes);
- **rebuilt** when it cannot be caught up: the live generation changed (a reindex swapped),
  the format stamp changed, the stream was trimmed past our position or recreated (a Redis
  flush), or, once caught up, its N / total length differ from the field's statistics in
  Redis (a check that holds exactly, since both describe the same documents).

A search is answered by ``search.serving.answer``: on the index as it stands, proved current
(and given the hits' hashes) by the same ``feed.lua`` call, which also brings any writes made
since.

Indexes live in an LRU within ``MEMORY_SERVING_BUDGET_MB`` per process
(``search.serving.held_indexes``); an evicted namespace is rebuilt on its next recall.
Thread-safe: one lock per index.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from pathlib import Path

from memories import store
from search.index import postings
from search.serving import overlapped, snapshot
from search.serving.documents import add_record, doc_of
from search.serving.engine import Builder, FieldIndex
from search.serving.held_indexes import (
    Served,
    _account,
    _evict,
    _registry,
    _registry_lock,
    counters,
    entry,
)

# Tests and benches call these two of held_indexes here.
from search.serving.held_indexes import clear as clear
from search.serving.held_indexes import held_bytes as held_bytes

log = logging.getLogger(__name__)

# Stream entries one feed.lua call reads (with each one's document vector): four times as
# many went over the 5 ms any command of a recall may take, under load.
FEED_COUNT = 64
BUILD_CHUNK = 1000
# Records one MGET of a build reads: an MGET of a whole chunk held Redis for milliseconds at
# 300k (bench/recall.py's longest commands while building), beside other recalls.
MGET_KEYS = 200
# A field with more documents than this is built on a background thread (seconds per 100k
# documents), which recalls wait for (search.memory_search); a smaller one is built inline.
SYNC_BUILD_DOCS = 5000
# Index formats this code serves (search.index.postings.INDEX_FORMAT); the stamp is
# ``<base>format`` (absent = "1"). An older one is served and upgraded by a reindex.
FORMATS = {"1", "2", "3", "4", "5", "6", "7"}
# The stamp's prefix while a write-started namespace awaits its check (put.lua; settled by
# search.index_lost): served by no reader until then.
NEW_STAMP = "new:"
# ``new:`` stamps this process found whole (search.index_lost.settle_new) while Redis refused
# to rewrite them (full): (namespace base, stamp) -> until when (monotonic seconds). Served
# as their format that long, then checked against the database again: a namespace Redis
# lost once more meanwhile (stamped ``new:`` again by its next write) is not served as whole
# for longer than SETTLED_SECONDS.
_settled: dict[tuple[str, str], float] = {}
SETTLED_SECONDS = 5.0


def settled_whole(user_id: str, stamp: str) -> None:
    """Note that the ``new:`` ``stamp`` of ``user_id`` was checked whole against the database
    though Redis could not rewrite it: this process serves the namespace for
    ``SETTLED_SECONDS``, then checks again."""
    _settled[(store.namespace_base(user_id), stamp)] = time.monotonic() + SETTLED_SECONDS


def _served(user_id: str, stamp: str) -> bool:
    """True when this process serves an index stamped ``stamp``: a format it knows, or a
    ``new:`` stamp of one it knows that it found whole lately (:func:`settled_whole`)."""
    if stamp in FORMATS:
        return True
    until = _settled.get((store.namespace_base(user_id), stamp))
    return (until is not None and until > time.monotonic()
            and stamp.removeprefix(NEW_STAMP) in FORMATS)
UPGRADE_CLAIM_SECONDS = 3600


class Unsupported(Exception):
    """The namespace's index is in a format this process does not serve."""


class NotReady(Exception):
    """The serving index is being built in the background (the recall waits for it)."""


@functools.cache
def _script():
    return store.get_client().register_script(
        Path(__file__).with_name("feed.lua").read_text())


def _stream_id(value: str) -> tuple[int, int]:
    ms, _, seq = value.partition("-")
    return int(ms), int(seq or 0)


def feed_reply(client, user_id: str, field_name: str, last_id: str, count: int,
          hash_ids: list[str] = (), *, hit_time: float | None = None,
          hash_fields: tuple[str, ...] = (), meanwhile=None):
    """One ``feed.lua`` call (see its header): up to ``count`` stream entries after
    ``last_id`` with their records, and the hot-store hashes of ``hash_ids`` (only
    ``hash_fields`` of each, when given), as a dict of the reply's parts; ``meanwhile``
    (a callable) runs while Redis answers, its result under ``"meanwhile"``. Raises
    ``redis.RedisError``, and what ``meanwhile`` raises."""
    args = [store.namespace_base(user_id), field_name, last_id, count,
            "" if hit_time is None else repr(hit_time), len(hash_fields), *hash_fields,
            *hash_ids]
    keys = [store.key(user_id, "stream")]
    side = None
    if meanwhile is None:
        reply = _script()(keys=keys, args=args, client=client)
    else:
        reply, side = overlapped.call(client, _script(), keys, args, meanwhile)
    (gen, fmt, n, total, length, top, added, read, ids, docs, hashes, counted,
     unlisted) = reply
    text = store.text
    return {"gen": text(gen), "format": text(fmt), "N": int(n), "total_len": int(total),
            "length": int(length), "top": text(top), "added": int(added),
            "read": [text(i) for i in read], "ids": [text(i) for i in ids], "docs": docs,
            "hashes": hashes, "counted": bool(counted), "unlisted": bool(unlisted),
            "field": field_name, "user_id": user_id, "meanwhile": side}


def unchanged(got: dict, served: Served) -> bool:
    """True when nothing was written since ``served`` was last caught up and checked."""
    return (not got["read"] and got["added"] == served.added and got["gen"] == served.gen
            and got["format"] == served.format and got["top"] == served.last_id
            and served.agrees(got))


def generation_field(field_name: str, gen: str) -> str:
    """The name of ``field_name``'s keys in generation ``gen`` (``c``, or ``c@3``)."""
    return field_name if gen in ("", "0") else f"{field_name}@{gen}"


def _build(client, user_id: str, field_name: str, served: Served) -> None:
    """Fill ``served`` from Redis in bounded chunks, noting the stream position first."""
    started = time.perf_counter()
    head = feed_reply(client, user_id, field_name, "0-0", 0)
    if not _served(user_id, head["format"]):
        raise Unsupported(head["format"])
    base = store.namespace_base(user_id)
    sfx = generation_field("", head["gen"])
    legacy = int(head["format"].removeprefix(NEW_STAMP)) < 7
    builder, cursor = Builder(), 0
    while True:
        # SSCAN may return a member twice (a set rehashing between calls): Builder.add
        # keeps the first.
        cursor, chunk = client.sscan(store.key(user_id, "ids"), cursor, count=BUILD_CHUNK)
        chunk = [store.text(m) for m in chunk]
        # The chunk's records by MGETs of MGET_KEYS (one slot: the namespace's hash tag; on
        # a cluster the pipeline of the namespace's node, whose MGET a cluster pipeline
        # refuses), in one round trip.
        pipe = store.NamespacePipelines(client).for_namespace(user_id)
        for at in range(0, len(chunk), MGET_KEYS):
            pipe.mget([f"{base}v{sfx}:d:{memory_id}" for memory_id in chunk[at:at + MGET_KEYS]])
        n_mgets = -(-len(chunk) // MGET_KEYS)
        if legacy:  # a format-6 index: the field's vector where no record replaced it yet
            for memory_id in chunk:
                pipe.hgetall(f"{base}{field_name}{sfx}:d:{memory_id}")
        replies = pipe.execute() if chunk else []
        records = [r for part in replies[:n_mgets] for r in part]
        vectors = replies[n_mgets:]
        for n, memory_id in enumerate(chunk):
            if records[n]:
                add_record(builder, memory_id, records[n], field_name)
            elif legacy and vectors[n]:
                doc = doc_of(memory_id, vectors[n], field_name)
                if doc is not None:
                    builder.add(memory_id, doc.dl, doc.type, doc.conv, doc.exp, doc.tf.keys(),
                                doc.tf.values(), doc.vf, doc.vu)
        if int(cursor) == 0:
            break
    served.index, served.offset = builder.finish(), (0, 0)
    served.gen, served.format = head["gen"], head["format"]
    served.last_id, served.added = head["top"], head["added"]
    served.builds += 1
    served.unverified = True
    counters.builds += 1
    counters.build_ms += (time.perf_counter() - started) * 1000


def catch_up(client, user_id: str, field_name: str, served: Served) -> str:
    """Apply the stream to ``served``: ``"ok"``; ``"rebuild"`` when it cannot be caught up;
    ``"mismatch"`` when caught up but its N / total length differ from Redis's."""
    while True:
        got = feed_reply(client, user_id, field_name, served.last_id, FEED_COUNT)
        state = apply_reply(got, served)
        if state != "more":
            return state


def cannot_follow(got: dict, *, gen: str, format: str, added: int, last_id: str) -> bool:
    """True when a reader that has applied the stream up to ``last_id`` (the ``added``-th
    entry) of generation ``gen`` and format ``format`` cannot follow it from ``got`` (a
    ``feed.lua`` reply): the generation or format changed, or entries it has not applied
    were trimmed (trimming removes the oldest ``entries_added - length``), or the stream
    was recreated (after a flush it counts from zero again, with other ids)."""
    return (got["gen"] != gen or got["format"] != format
            or got["added"] - got["length"] > added or got["added"] < added
            or _stream_id(got["top"]) < _stream_id(last_id))


def apply_reply(got: dict, served: Served) -> str:
    """Apply one ``feed.lua`` reply to ``served``: ``"more"`` when entries remain after it,
    else as :func:`catch_up` answers."""
    if not _served(got["user_id"], got["format"]):
        raise Unsupported(got["format"])
    if cannot_follow(got, gen=served.gen, format=served.format, added=served.added,
                     last_id=served.last_id):
        return "rebuild"
    index = served.index
    for memory_id, raw in zip(got["ids"], got["docs"], strict=True):
        doc = doc_of(memory_id, raw, got["field"]) if raw else None
        if doc is None:
            index.remove(memory_id)
        else:
            index.upsert(doc)
    counters.applied += len(got["ids"])
    if got["read"]:
        served.last_id = got["read"][-1]
        served.added += len(got["read"])
        if served.last_id == got["top"] and served.added != got["added"]:
            # Read up to the stream's last entry, yet the entries counted differ: a stream
            # recreated (a flush) as long as ours was, with later ids, is not ours.
            return "rebuild"
    elif served.added < got["added"]:
        return "rebuild"  # entries deleted one by one (XDEL): cannot tell which
    if served.added >= got["added"]:
        served.redis_counts = (got["N"], got["total_len"])
        return "ok" if served.agrees(got) else "mismatch"
    return "more"


def _load(client, user_id: str, field_name: str, served: Served, head: dict) -> bool:
    """Install the namespace's snapshot (``search.serving.snapshot``) in ``served`` when it
    can be caught up from the stream: True when installed. Not ``unverified``: a snapshot
    whose caught-up N / total length differ from Redis's is rebuilt, never served."""
    loaded = snapshot.load(client, user_id, field_name, head)
    if loaded is None:
        return False
    served.index, meta = loaded
    served.offset = (0, 0)
    served.gen, served.format = meta["gen"], meta["format"]
    served.last_id, served.added = meta["last_id"], meta["added"]
    served.unverified = False
    counters.loads += 1
    return True


def _build_behind(client, user_id: str, field_name: str, served: Served) -> None:
    """Build on a thread of its own, then install (the next search catches it up)."""
    key = (store.namespace_base(user_id), field_name)

    def run():
        try:
            fresh = Served()
            # Read before the build: a purge during it makes the saved file refused.
            purge_count = snapshot.purges(client, user_id)
            _build(client, user_id, field_name, fresh)
            # Any process of any host (this one after a restart too) loads it instead.
            snapshot.save(client, user_id, field_name, fresh.index, gen=fresh.gen,
                          format=fresh.format, last_id=fresh.last_id, added=fresh.added,
                          purge_count=purge_count)
            with served.lock:
                served.index, served.gen, served.format = fresh.index, fresh.gen, fresh.format
                served.offset = (0, 0)
                served.last_id, served.added = fresh.last_id, fresh.added
                served.builds += 1
                served.unverified = True
            with _registry_lock:
                if _registry.get(key) is served:  # not evicted meanwhile
                    _account(served)
        except Exception:
            log.exception("background build of %s/%s failed", user_id, field_name)
        finally:
            served.thread = None

    served.thread = threading.Thread(target=run, daemon=True, name=f"serving-{field_name}")
    served.thread.start()


def serving_index(client, user_id: str, field_name: str) -> tuple[Served, FieldIndex]:
    """The caught-up serving index of one field of one namespace, its lock HELD: the caller
    searches it and then releases ``served.lock``. Raises Unsupported, NotReady (a large
    index is being built in the background), ``redis.RedisError``.
    """
    key = (store.namespace_base(user_id), field_name)
    served = entry(user_id, field_name)
    served.lock.acquire()
    try:
        served.used = time.monotonic()
        for attempt in range(3):
            if served.index is None:
                if served.thread is not None:
                    raise NotReady(user_id)
                head = feed_reply(client, user_id, field_name, "0-0", 0)
                if not _served(user_id, head["format"]):  # before a build starts (a thread)
                    raise Unsupported(head["format"])
                if head["N"] <= SYNC_BUILD_DOCS:
                    _build(client, user_id, field_name, served)
                elif attempt or not _load(client, user_id, field_name, served, head):
                    _build_behind(client, user_id, field_name, served)
                    raise NotReady(user_id)
            state = catch_up(client, user_id, field_name, served)
            unverified, served.unverified = served.unverified, False
            if state == "ok":
                break
            if state == "mismatch" and unverified:
                # Built from the same data it is compared with: the statistics hash itself
                # is off (drift; reconcile repairs it). Serve the documents as they are, and
                # take this difference as known until it changes.
                n, total_len = served.redis_counts
                served.offset = (n - served.index.n_live, total_len - served.index.total_len)
                log.warning("statistics of %s/%s differ from its documents by %s (N, "
                            "total length): reconcile repairs them", user_id, field_name,
                            served.offset)
                break
            log.info("serving index of %s/%s: %s, rebuilding", user_id, field_name, state)
            if attempt < 2:
                served.index = None
        if served.format.removeprefix(NEW_STAMP) != postings.INDEX_FORMAT:
            request_rebuild(client, user_id, "is in an older format")
    except BaseException:
        served.lock.release()
        raise
    _evict(key)
    return served, served.index


def request_rebuild(client, user_id: str, why: str) -> None:
    """One reindex job per namespace whose index must be rebuilt from the database (it
    predates this format, or Redis lost it), claimed in Redis so the processes that notice
    it ask once an hour at most; ``why`` goes to the log."""
    claim = store.key(user_id, "format", "upgrade")
    if client.set(claim, postings.INDEX_FORMAT, nx=True, ex=UPGRADE_CLAIM_SECONDS):
        from memories import queue

        queue.enqueue("operations.jobs.reindex_job", user_id, namespaces=[user_id])
        log.info("index of %s %s: reindex queued", user_id, why)
