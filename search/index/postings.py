"""Redis I/O of the index: one record per memory, field statistics, the write stream.

Layout under a namespace's base (``mc:{ns}:``; ``<sfx>`` is ``""`` for generation 0 and
``@N`` for generation N, see ``search.index.generations``):

- ``v<sfx>:d:<id>`` string: the memory's index record (``search.index.fields.record_text``):
                    its content and context lengths, content terms and their frequencies,
                    context terms (stemmed) and theirs, and the filter fields (type,
                    conversation, expiry, validity) as JSON. The fields ``c``, ``s`` and
                    ``xs`` are derived from it (``search.index.fields.record_postings``)
- ``<field><sfx>:stats`` hash: ``N`` documents of the field, ``total_len`` their lengths
- ``ids``           set: the memories held (what deleting a generation walks)
- ``ver``           hash: memory_id -> the last version put
- ``m:<id>``        the hot-store hash (``memories.mirror``: its empty fields are left out)

and ``stream``, the write stream: an entry per write, ``op`` (upsert | delete), ``id``,
``version`` and, for an upsert, ``f``: the field documents it changed, comma-separated
(absent in entries of writers before 2 Dec 2026: every field).

No postings are stored: every process compiles its serving index from the records and
catches it up from the stream (``search.serving.feed``); scores are never stored (IDF and
the average length come from the live statistics at query time). Each call of ``put.lua``
is one atomic script, so readers never see half a write.
"""

import functools
from dataclasses import dataclass
from pathlib import Path

from redis import exceptions as redis_exceptions

from memories import store

_LUA = Path(__file__).with_name("lua")
# The index format stamp (``<base>format``; absent = "1"), written by a namespace's first
# put and by every reindex. "1": terms of the analysis before Chinese dates, numbers and
# function-character bigrams were kept as words; "2": hot-store hashes written before
# ``author`` joined them (the recall filter reads it there); "3": terms of the analysis
# before a number glued to its unit or year ("102周", "2025年") was also indexed bare ("102",
# "2025"); "4": document vectors and hashes before validity (``#vf``/``#vu``,
# ``valid_from``/``valid_until``/``superseded_by``) joined them; "5": hashes before the agent
# scope (``agent_id``, ``run_id``: recall filters read them there) joined them; "6": one
# document vector per field and one sorted set of postings per term; "7": today's (one
# record per memory, no stored postings). A serving process that finds an older stamp asks
# for one reindex of the namespace (search.serving.feed), which rebuilds it, hashes
# included, from the database and stamps it: existing indexes upgrade by themselves, and
# are served meanwhile as they are (a format-6 index is upgraded memory by memory as
# memories are written: put.lua).
INDEX_FORMAT = "7"


@functools.cache
def _script(name: str):
    # redis-py Script objects run by EVALSHA (loading on a NOSCRIPT miss, pipelines included),
    # so the source crosses the wire once per server rather than with every call. The client
    # they are registered with only supplies the encoder; callers pass the client to use.
    return store.get_client().register_script((_LUA / name).read_text())


@dataclass(frozen=True)
class Record:
    """One memory's index record as ``fields.record_text`` makes it (``""``: no token)."""

    text: str = ""


# The most record bytes one put.lua call writes: a bulk load is cut into calls of at most
# this many (a single memory of more goes alone), so no call holds Redis much longer than
# one memory's put does (bench/ingest.py).
PUT_BYTES_PER_CALL = 16_000
PUT_MEMORIES_PER_CALL = 200


def _memory_args(*, user_id: str, memory_id: str, version: int, hash_fields: dict[str, str],
                 record: Record, ttl_seconds: int = 0) -> list:
    args: list = [memory_id, version, int(ttl_seconds), len(hash_fields)]
    for name, value in hash_fields.items():
        args += [name, value]
    args.append(record.text)
    return args


def _put_call(puts: list[dict], *, stream_maxlen: int, mode: str) -> tuple[list, list]:
    """KEYS and ARGV of one put.lua call for ``puts`` (one namespace, distinct ids)."""
    user_id = puts[0]["user_id"]
    args: list = [store.namespace_base(user_id), mode, stream_maxlen, INDEX_FORMAT, len(puts)]
    for put in puts:
        args += _memory_args(**put)
    return [store.key(user_id, "m", puts[0]["memory_id"])], args


def _size(put: dict) -> int:
    return len(put["record"].text)


def put_batches(puts: list[dict]) -> list[list[dict]]:
    """``puts`` cut into put.lua calls: one namespace per call, distinct memory ids per call
    (a later put of an id starts a new call, so order is kept), at most
    ``PUT_MEMORIES_PER_CALL`` memories and ``PUT_BYTES_PER_CALL`` record bytes (a memory
    with more goes alone)."""
    batches: list[list[dict]] = []
    open_: dict[str, tuple[list[dict], set, list[int]]] = {}
    for put in puts:
        n = _size(put)
        batch = open_.get(put["user_id"])
        if (batch is None or put["memory_id"] in batch[1]
                or len(batch[0]) >= PUT_MEMORIES_PER_CALL
                or batch[2][0] + n > PUT_BYTES_PER_CALL):
            batch = open_[put["user_id"]] = ([], set(), [0])
            batches.append(batch[0])
        batch[0].append(put)
        batch[1].add(put["memory_id"])
        batch[2][0] += n
    return batches


def put_memory(client, *, stream_maxlen: int = 10000, mode: str = "write", **put) -> str:
    """Replace a memory's hot-store hash and index record in one atomic script.

    Keyword arguments: ``user_id``, ``memory_id``, ``version``, ``hash_fields`` (str -> str,
    no empty value), ``record`` (:class:`Record`), ``ttl_seconds`` (0 = none),
    ``stream_maxlen``, ``mode``. Empty ``hash_fields`` and ``record`` remove the memory
    entirely (forget, purge, expiry). ``mode="build"`` writes
    only the generation a reindex is building. A put older than the version already in
    Redis changes nothing. Returns ``"upsert"``, ``"delete"`` or ``"stale"``; raises
    ``redis.RedisError`` when Redis fails.
    """
    keys, args = _put_call([put], stream_maxlen=stream_maxlen, mode=mode)
    return store.text(_script("put.lua")(keys=keys, args=args, client=client)[0])


def queue_puts(pipe, puts: list[dict], *, stream_maxlen: int = 10000,
               mode: str = "write") -> int:
    """Queue ``puts`` (each as :func:`put_memory` takes it; one namespace per pipeline on a
    cluster) on a pipeline, several memories per put.lua call (:func:`put_batches`), each
    call atomic, each as a bare EVALSHA: redis-py's own script handling would first send
    SCRIPT EXISTS, one more round trip per pipeline. Execute the pipeline through
    :func:`run_with_scripts`, which loads the script when Redis lacks it. Returns the
    number of calls queued."""
    sha = _script("put.lua").sha
    batches = put_batches(puts)
    for batch in batches:
        keys, args = _put_call(batch, stream_maxlen=stream_maxlen, mode=mode)
        pipe.evalsha(sha, len(keys), *keys, *args)
    return len(batches)


def run_with_scripts(client, run):
    """``run()`` (which queues :func:`queue_put` calls and executes its pipelines), once more
    after loading the scripts if Redis did not hold them (a restart, SCRIPT FLUSH). Safe to
    repeat: ``put.lua`` accepts an equal version and leaves the same state."""
    try:
        return run()
    except redis_exceptions.NoScriptError:
        for name in ("put.lua",):
            client.script_load(_script(name).script)
        return run()


def live_field(client, user_id: str, field: str) -> str:
    """The key name of ``field`` in the namespace's live generation (``c`` or ``c@3``)."""
    gen = store.text(client.get(store.key(user_id, "gen")))
    return field if gen in (None, "0") else f"{field}@{gen}"


def field_stats(client, *, user_id: str, field: str) -> dict[str, float]:
    """``{"N", "total_len", "avgdl"}`` of one field of the live generation."""
    raw = client.hgetall(store.key(user_id, live_field(client, user_id, field), "stats"))
    raw = {store.text(k): store.text(v) for k, v in raw.items()}
    n = int(raw.get("N", 0))
    total = int(raw.get("total_len", 0))
    return {"N": n, "total_len": total, "avgdl": total / n if n else 0.0}
