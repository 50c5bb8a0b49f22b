"""Access counts: every recall counts its hits in Redis; the database gets them in batches.

A recall must not write the database: one UPDATE per recall was most of a recall's cost under
load, and on SQLite every such write queues behind the others. So a recall runs one script in
its namespace's slot that bumps ``access_count``/``accessed_at`` on the hot-store hashes (exact
at once, atomic under concurrency) and adds the same hits to the namespace's *pending* hash.
:func:`access_fold` later moves pending hits into ``Memory.access_count`` /
``Memory.accessed_at``: from the periodic job every ``MEMORY_ACCESS_FOLD_SECONDS``, and
before anything reads those columns (the memory API, the memory page, export, cleanup).

Keys of one namespace (all share its hash tag, so every script stays in one slot):

``access``            hash ``n:<memory_id>`` -> hits since the last fold,
                      ``t:<memory_id>`` -> time of the last hit (epoch seconds)
``access:b:<batch>``  a pending hash taken for folding (renamed, so new hits start afresh)
``access:batches``    set of batch ids taken and not yet deleted

and one global set, ``access:namespaces``, of namespaces that may hold pending hits.

Exactly once: a batch is applied in one database transaction that also inserts its
``AccessFold`` row, whose primary key refuses a second application; only then is the batch
deleted from Redis. A batch left behind by a crash between the two is found in
``access:batches`` by the next fold, which applies it or, finding its row, just deletes it.
What Redis loses before a fold (a flush, a restart without persistence) is lost: at most
``MEMORY_ACCESS_FOLD_SECONDS`` of hits.
"""

import datetime as dt
import logging
import time
import uuid

from integrations.metrics.registry import count_redis_error
from memories import services, store

log = logging.getLogger(__name__)

# KEYS: pending hash, then one memory hash per id; ARGV: now (epoch s), then the ids.
# A hash that is gone (expired, forgotten) is not re-created: it would lose its TTL.
_RECORD = """
local now = ARGV[1]
for i = 2, #KEYS do
  local id = ARGV[i]
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'access_count', 1)
    redis.call('HSET', KEYS[i], 'accessed_at', now)
  end
  redis.call('HINCRBY', KEYS[1], 'n:' .. id, 1)
  redis.call('HSET', KEYS[1], 't:' .. id, now)
end
return #KEYS - 1
"""

# KEYS: pending hash, batch hash, batch set; ARGV: batch id. 1 when a batch was taken.
_TAKE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('SADD', KEYS[3], ARGV[1])
return 1
"""

# KEYS: batch hash, batch set; ARGV: batch id.
_DROP = """
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1
"""


def _pending_set() -> str:
    return store.global_key("access:namespaces")


def access_record(*, user_id: str, memory_ids: list[str], now: float | None = None) -> None:
    """Count one hit on each of ``memory_ids`` (one namespace's recall results).

    One round trip: the counting script and the namespace's entry in the pending set.
    ``now`` is epoch seconds (default: the current time). Raises ``RedisError``.
    """
    if not memory_ids:
        return
    client = store.get_client()
    keys = [store.key(user_id, "access")]
    keys += [store.key(user_id, "m", memory_id) for memory_id in memory_ids]
    args = [repr(time.time() if now is None else now), *memory_ids]
    if store.is_cluster(client):  # the global set lives in another slot
        client.eval(_RECORD, len(keys), *keys, *args)
        client.sadd(_pending_set(), user_id)
        return
    pipe = client.pipeline(transaction=False)
    pipe.eval(_RECORD, len(keys), *keys, *args)
    pipe.sadd(_pending_set(), user_id)
    pipe.execute()


def recall_hits_record(*, user_id: str, memory_ids: list[str], counted: bool) -> None:
    """Count a recall's hits: the one act every adapter (REST ``/recall``, MCP
    ``search_memories``) performs after a recall of ``user_id``'s memories.

    ``memory_ids``: the results, best first; ``counted``: the search already counted them in
    its own round trip (``SearchResult.hits_counted``), so nothing is done. A Redis error is
    logged and counted (metric ``recall_hits``), never raised: the results stand, only these
    hits go uncounted.
    """
    if counted:
        return
    try:
        access_record(user_id=user_id, memory_ids=memory_ids)
    except store.RedisError as exc:
        count_redis_error("recall_hits")
        log.warning("recall hits not counted: %s", type(exc).__name__)


# How long a namespace's ``access:listed`` mark vouches for its place in the pending set: a
# set lost on its own (another Cluster node's failover) is repaired within this time.
LISTED_SECONDS = 300


def access_pending_add(*, user_id: str) -> None:
    """Mark namespace ``user_id`` listed (``access:listed``, in its own slot), then put it in
    the set of namespaces with pending hits: for recalls that count their hits inside their
    own script (the search's ``feed.lua``), which asks for this only while the mark is
    absent. A fold takes the namespace out of the set, then drops the mark, then puts the
    namespace back when hits came meanwhile. The two orders make "marked but not in the set"
    impossible: that needs our mark after the fold's drop and the fold's removal after our
    add. So a hit counted under the mark is always folded. Raises ``RedisError`` (the mark
    is dropped again when the add failed, so the next recall asks again)."""
    client = store.get_client()
    mark = store.key(user_id, "access", "listed")
    client.set(mark, "1", ex=LISTED_SECONDS)
    try:
        client.sadd(_pending_set(), user_id)
    except store.RedisError:
        client.delete(mark)
        raise


# KEYS: pending hash, then one memory hash per id; ARGV: the ids. Takes back one counted hit.
_UNCOUNT = """
for i = 2, #KEYS do
  local id = ARGV[i - 1]
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'access_count', -1)
  end
  if redis.call('HINCRBY', KEYS[1], 'n:' .. id, -1) <= 0 then
    redis.call('HDEL', KEYS[1], 'n:' .. id, 't:' .. id)
  end
end
return #KEYS - 1
"""


def access_uncount(*, user_id: str, memory_ids: list[str]) -> None:
    """Take back one hit of each of ``memory_ids``, counted by a recall that then did not
    return them (the database no longer serves them: ``search.pending``). Raises
    ``RedisError``."""
    if not memory_ids:
        return
    keys = [store.key(user_id, "access")]
    keys += [store.key(user_id, "m", memory_id) for memory_id in memory_ids]
    store.get_client().eval(_UNCOUNT, len(keys), *keys, *memory_ids)


def access_counted(*, user_id: str, unlisted: bool, dropped: list[str]) -> None:
    """After a search that counted its hits in its own script: put the namespace in the
    pending set when it was not marked there (:func:`access_pending_add`), and take back the
    hits of rows it counted and did not return (:func:`access_uncount`). Logs and never
    raises: the results stand, and an unmarked namespace is asked for again by the next
    recall."""
    try:
        if unlisted:
            access_pending_add(user_id=user_id)
        if dropped:
            access_uncount(user_id=user_id, memory_ids=dropped)
    except store.RedisError as exc:
        log.warning("recall hits: pending set not updated: %s", type(exc).__name__)


def access_fold(*, user_ids: list[str] | None = None) -> dict:
    """Fold pending hits of ``user_ids`` (default: every namespace holding some) into the
    database; returns ``{"namespaces", "batches", "hits"}`` folded. Raises ``RedisError``."""
    client = store.get_client()
    if user_ids is None:
        user_ids = sorted(store.text(u) for u in client.smembers(_pending_set()))
    totals = {"namespaces": 0, "batches": 0, "hits": 0}
    for user_id in user_ids:
        batches, hits = _fold_namespace(client, user_id)
        totals["namespaces"] += 1 if batches else 0
        totals["batches"] += batches
        totals["hits"] += hits
    return totals


def access_fold_quietly(*, user_ids: list[str] | None = None) -> int | None:
    """:func:`access_fold` for readers that must work with Redis down (the database then
    lacks only the hits still pending, and a later fold brings them); returns the hits
    folded, None when Redis failed."""
    try:
        return access_fold(user_ids=user_ids)["hits"]
    except store.RedisError as exc:
        log.warning("access counts not folded: %s", type(exc).__name__)
        return None


def access_pending() -> dict:
    """``{"namespaces", "memories"}``: how many namespaces, and memories in them, have hits
    counted in Redis and not yet folded into the database (taken batches not included).
    Raises ``RedisError``."""
    client = store.get_client()
    user_ids = [store.text(u) for u in client.smembers(_pending_set())]
    pipes = store.NamespacePipelines(client)
    for user_id in user_ids:
        pipes.for_namespace(user_id).hlen(store.key(user_id, "access"))
    fields = sum(n for replies in pipes.execute() for n in replies)
    return {"namespaces": len(user_ids), "memories": fields // 2}  # n: and t: per memory


def with_hits_folded(memory):
    """``memory`` (a Memory row) with its namespace's pending hits folded in first, so a
    reader sees the exact ``access_count``; with Redis down, the row as it is. Re-read even
    when this fold found nothing: another folder may have applied hits since the row was
    read."""
    if access_fold_quietly(user_ids=[memory.user_id]) is not None:
        memory.refresh_from_db(fields=["access_count", "accessed_at"])
    return memory


def access_discard(*, user_id: str) -> None:
    """Forget the hits of namespace ``user_id`` that Redis holds and the database does not
    (pending, taken, and the hot-store counts), so the rows' counts are the truth again:
    a replace import restores counts from a document. Raises ``RedisError``."""
    client = store.get_client()
    ids = [store.text(i) for i in client.smembers(store.key(user_id, "ids"))]
    batches = [store.text(b) for b in client.smembers(store.key(user_id, "access", "batches"))]
    pipe = store.NamespacePipelines(client).for_namespace(user_id)  # one slot: one node
    for memory_id in ids:
        pipe.hdel(store.key(user_id, "m", memory_id), "access_count", "accessed_at")
    pipe.delete(store.key(user_id, "access"), store.key(user_id, "access", "batches"),
                store.key(user_id, "access", "listed"),
                *[store.key(user_id, "access", "b", b) for b in batches])
    pipe.execute()
    client.srem(_pending_set(), user_id)


def _fold_namespace(client, user_id: str) -> tuple[int, int]:
    pending, batches = store.key(user_id, "access"), store.key(user_id, "access", "batches")
    # Time first, so batches sort (and are applied) in the order they were taken.
    new_batch = f"{time.time_ns():016x}{uuid.uuid4().hex[:16]}"
    client.eval(_TAKE, 3, pending, store.key(user_id, "access", "b", new_batch), batches,
                new_batch)
    done = hits = 0
    for batch_id in sorted(store.text(b) for b in client.smembers(batches)):
        batch_key = store.key(user_id, "access", "b", batch_id)
        hits += services.memory_access_apply(
            batch_id=batch_id, user_id=user_id, hits=_parse(client.hgetall(batch_key)))
        client.eval(_DROP, 2, batch_key, batches, batch_id)
        done += 1
    # Out of the set only when nothing is left (a crash above keeps it in for the next
    # fold), and in again at once if hits came meanwhile: a hit's SADD either follows our
    # SREM or precedes it, and then its pending hash is what we see here.
    client.srem(_pending_set(), user_id)
    client.delete(store.key(user_id, "access", "listed"))  # after the SREM: access_pending_add
    if client.exists(pending) or client.scard(batches):
        client.sadd(_pending_set(), user_id)
    return done, hits


def _parse(raw: dict) -> dict[str, tuple[int, dt.datetime]]:
    """``{memory_id: (hits, last hit time)}`` of a batch hash."""
    fields = {store.text(k): store.text(v) for k, v in raw.items()}
    return {
        name[2:]: (int(count), dt.datetime.fromtimestamp(float(fields["t:" + name[2:]]), dt.UTC))
        for name, count in fields.items()
        if name.startswith("n:")
    }
