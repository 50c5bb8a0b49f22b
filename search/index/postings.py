"""Redis I/O of the BM25 index: postings, document vectors and statistics per field.

Layout under a namespace's base (``mc:{ns}:``), per index field ``f``:

- ``f:t:<term>``   sorted set of postings, member = memory_id, score = -impact, where impact is
                   the BM25 tf part computed with the reference average length ``avgdl_ref``
                   (best first under ZRANGE; equal impacts in ascending memory_id order)
- ``f:d:<id>``     hash: term -> raw term frequency, ``#dl`` document length, and ``#type``,
                   ``#conv``, ``#exp`` for filtering without touching the memory hash
- ``f:stats``      hash: ``N`` live documents, ``total_len`` sum of lengths, ``avgdl_ref``

and once per namespace ``stream``, the write stream: an entry per write, ``op`` (upsert |
delete), ``id``, ``version`` and, for an upsert, ``f``: the field documents it changed,
comma-separated (absent in entries of writers before 2 Dec 2026: every field).

Scores are never stored: IDF and the average length come from the live statistics at
query time (see ``search.lua``). Each memory's update is one Lua script, so readers never
see half of it.
"""

import functools
from dataclasses import dataclass
from pathlib import Path

from redis import exceptions as redis_exceptions

from memories import store

_LUA = Path(__file__).with_name("lua")
# BM25 parameters the stored impacts are computed with; queries with other k1/b cannot use
# the impact bound and are scored exhaustively.
REF_K1 = 1.2
REF_B = 0.75
# avgdl_ref for a namespace's first document; a reindex replaces it with the real average.
DEFAULT_AVGDL_REF = 12.0
# The index format stamp (``<base>format``; absent = "1"), written by a namespace's first
# put and by every reindex. "1": terms of the analysis before Chinese dates, numbers and
# function-character bigrams were kept as words; "2": hot-store hashes written before
# ``author`` joined them (the recall filter reads it there); "3": terms of the analysis
# before a number glued to its unit or year ("102周", "2025年") was also indexed bare ("102",
# "2025"); "4": document vectors and hashes before validity (``#vf``/``#vu``,
# ``valid_from``/``valid_until``/``superseded_by``) joined them; "5": hashes before the agent
# scope (``agent_id``, ``run_id``: recall filters read them there) joined them; "6": today's. A serving
# process that finds an older stamp asks for one reindex of the namespace (search.serving.feed), which rebuilds it, hashes included, from the database
# and stamps it: existing indexes upgrade by themselves.
INDEX_FORMAT = "6"


@functools.cache
def _script(name: str):
    # redis-py Script objects run by EVALSHA (loading on a NOSCRIPT miss, pipelines included),
    # so the source crosses the wire once per server rather than with every call. The client
    # they are registered with only supplies the encoder; callers pass the client to use.
    return store.get_client().register_script((_LUA / name).read_text())


@dataclass(frozen=True)
class FieldTerms:
    """One index field of one memory: its name, document length and term frequencies."""

    field: str
    tf: dict[str, int]

    @property
    def dl(self) -> int:
        return sum(self.tf.values())


# The most postings one put.lua call writes: a bulk load is cut into calls of at most this
# many (a single memory of more goes alone), so no call holds Redis much longer than one
# memory's put does (longer calls held Redis past a recall's budget; bench/ingest.py).
PUT_POSTINGS_PER_CALL = 150
PUT_MEMORIES_PER_CALL = 200


def _memory_args(*, user_id: str, memory_id: str, version: int, hash_fields: dict[str, str],
                 filter_fields: dict[str, str], fields: list[FieldTerms],
                 ttl_seconds: int = 0) -> list:
    args: list = [memory_id, version, int(ttl_seconds), len(hash_fields)]
    for name, value in hash_fields.items():
        args += [name, value]
    args.append(len(filter_fields))
    for name, value in filter_fields.items():
        args += [name, value]
    args.append(len(fields))
    for f in fields:
        args += [f.field, f.dl, len(f.tf)]
        for term, tf in f.tf.items():
            args += [term, tf]
    return args


def _put_call(puts: list[dict], *, stream_maxlen: int, mode: str) -> tuple[list, list]:
    """KEYS and ARGV of one put.lua call for ``puts`` (one namespace, distinct ids)."""
    user_id = puts[0]["user_id"]
    args: list = [store.namespace_base(user_id), mode, DEFAULT_AVGDL_REF, REF_K1, REF_B,
                  stream_maxlen, INDEX_FORMAT, len(puts)]
    for put in puts:
        args += _memory_args(**put)
    return [store.key(user_id, "m", puts[0]["memory_id"])], args


def _postings(put: dict) -> int:
    return sum(len(f.tf) for f in put["fields"])


def put_batches(puts: list[dict]) -> list[list[dict]]:
    """``puts`` cut into put.lua calls: one namespace per call, distinct memory ids per call
    (a later put of an id starts a new call, so order is kept), at most
    ``PUT_MEMORIES_PER_CALL`` memories and ``PUT_POSTINGS_PER_CALL`` postings (a memory with
    more goes alone)."""
    batches: list[list[dict]] = []
    open_: dict[str, tuple[list[dict], set, list[int]]] = {}
    for put in puts:
        n = _postings(put)
        batch = open_.get(put["user_id"])
        if (batch is None or put["memory_id"] in batch[1]
                or len(batch[0]) >= PUT_MEMORIES_PER_CALL
                or batch[2][0] + n > PUT_POSTINGS_PER_CALL):
            batch = open_[put["user_id"]] = ([], set(), [0])
            batches.append(batch[0])
        batch[0].append(put)
        batch[1].add(put["memory_id"])
        batch[2][0] += n
    return batches


def put_memory(client, *, stream_maxlen: int = 10000, mode: str = "write", **put) -> str:
    """Replace a memory's hot-store hash and postings in one atomic script.

    Keyword arguments: ``user_id``, ``memory_id``, ``version``, ``hash_fields`` and
    ``filter_fields`` (str -> str), ``fields`` (list of :class:`FieldTerms`),
    ``ttl_seconds`` (0 = none), ``stream_maxlen``, ``mode``. Empty ``hash_fields`` and
    ``fields`` remove the memory entirely (forget, purge, expiry). ``mode="build"`` writes
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


@dataclass
class FieldHits:
    """What :func:`search_field` found: live statistics and candidate rows.

    ``rows`` are ``(memory_id, dl, {term: tf})``; in ``any``/``all`` mode they are the exact
    top k by BM25 (ties by memory_id), in ``collect`` mode every match, unranked.
    """

    n_docs: int
    total_len: int
    df: dict[str, int]
    rows: list[tuple[str, int, dict[str, int]]]
    expired: list[str]

    @property
    def avgdl(self) -> float:
        return self.total_len / self.n_docs if self.n_docs else 0.0


def search_field(
    client, *, user_id: str, field: str, terms: list[str], k: int, k1: float, b: float,
    mode: str, now: float, conversation_id: str | None = None, types: list[str] | None = None,
) -> FieldHits:
    """Run ``search.lua`` for distinct ``terms`` over one field; mode any | all | collect.

    ``now`` is epoch seconds (short-term memories past ``expire_at`` are skipped and
    reported in ``expired``). Raises ``redis.RedisError``.
    """
    if mode != "collect" and (k1, b) != (REF_K1, REF_B):
        mode = "collect"
    types_arg = "," + ",".join(types) + "," if types else ""
    args = [store.namespace_base(user_id), field, k, k1, b, mode, now,
            conversation_id or "", types_arg, len(terms), *terms]
    reply = _script("search.lua")(keys=[store.key(user_id, field, "stats")], args=args, client=client)
    n_docs, total, dfs, rows, expired = reply
    text = store.text
    return FieldHits(
        n_docs=int(n_docs),
        total_len=int(total),
        df={t: int(d) for t, d in zip(terms, dfs, strict=True)},
        rows=[
            (text(r[0]), int(r[1]), {t: int(tf) for t, tf in zip(terms, r[2], strict=True) if tf})
            for r in rows
        ],
        expired=[text(e) for e in expired],
    )


def live_field(client, user_id: str, field: str) -> str:
    """The key name of ``field`` in the namespace's live generation (``c`` or ``c@3``)."""
    gen = store.text(client.get(store.key(user_id, "gen")))
    return field if gen in (None, "0") else f"{field}@{gen}"


def field_stats(client, *, user_id: str, field: str) -> dict[str, float]:
    """``{"N", "total_len", "avgdl", "avgdl_ref"}`` of one field of the live generation."""
    raw = client.hgetall(store.key(user_id, live_field(client, user_id, field), "stats"))
    raw = {store.text(k): store.text(v) for k, v in raw.items()}
    n = int(raw.get("N", 0))
    total = int(raw.get("total_len", 0))
    return {"N": n, "total_len": total, "avgdl": total / n if n else 0.0,
            "avgdl_ref": float(raw.get("avgdl_ref", DEFAULT_AVGDL_REF))}
