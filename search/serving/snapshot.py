"""Serving indexes kept in Redis as compact snapshots, so any process of any host loads one
instead of building it.

A large namespace's serving index takes seconds per 100k memories to build from Redis
(``feed._build``), in every process that serves it: each gunicorn worker of each host, again
after every restart. After a background build (``feed``) and whenever the worker refreshes
it (``search.serving.snapshot_refresh``), a field's index is saved here, beside the
namespace's other keys (its hash tag: one Cluster slot); a process without that index loads
it (a fraction of a second) and catches it up from the namespace's write stream as usual,
from the position it was saved at.

**Keys** (all under ``store.namespace_base``):

- ``snap:<field>``: the meta, a small JSON string: version, namespace, field, generation,
  format, the stream entry it was saved after (``last_id``, its fields, ``added``), the purge
  count read before its build, the token and count of its chunks, the byte sizes, the CRC32
  of the whole and the layout of its sections;
- ``snap:<field>:<token>:<i>``: the chunks, ``CHUNK_BYTES`` at most each (a GET of one takes
  well under a millisecond), written BEFORE the meta is switched to them, so a reader never
  sees half of a snapshot; the chunks of the meta it replaces are deleted by their names in
  the same script (never a SCAN);
- ``snaps``: the registry of every chunk set that may exist (``field/token/count/purges/
  time``), so a purge finds them all, those of a save still under way included.

**Encoding**: ``search.serving.snapshot_codec``; ``bench/first_recall.py`` measures it.

A snapshot is used only when it provably describes the live index: same namespace, field,
generation and format, and the stream still holds the very entry it was saved after (id,
fields, count of entries added), at most ``MAX_BEHIND`` back; once caught up, its N and
total length must equal Redis's statistics, or it is built after all. A damaged one (a
chunk missing, another length or checksum, arrays that do not fit) is logged, deleted and
built again.

**Purges.** A purge must leave no term of the purged text in any snapshot. Every purge
counts itself in Redis (``<base>purges``) and, once counted, deletes the namespace's
snapshots and every chunk the registry names that was written before it (:func:`purged`).
A chunk is written, and a meta switched, only while the count still equals the one read
before the build began (both checked in the same script as the write), so a build that a
purge overtook writes nothing more and drops what it wrote.
"""

from __future__ import annotations

import functools
import json
import logging
import secrets
import time
import zlib

from redis.client import NEVER_DECODE

from memories import store
from search.index import fields as index_fields
from search.serving.engine import FieldIndex
from search.serving.snapshot_codec import decode, encode

log = logging.getLogger(__name__)

VERSION = 2
# A snapshot further behind the stream than this many entries is not loaded: its catch-up
# (64 entries a feed.lua call) would hold the recall that loads it, and every other recall
# of the namespace, for longer than a build in the background costs them.
MAX_BEHIND = 2000
# Bytes per chunk key: one GET of it stays far below the time any command of a recall may
# take (search/serving/feed.py). A little under 256 KiB, so the string with Redis's header
# fits the allocator's 256 KiB size class (at 256 KiB exactly it took the next one).
CHUNK_BYTES = 256 * 1024 - 64
# Chunks read per pipelined round trip.
READ_BATCH = 8
# Chunks not yet switched to expire after this (their saver died); the registry forgets
# them after it too.
PENDING_SECONDS = 900

# KEYS: purges, registry, chunk. ARGV: the purge count read before the build, the save's
# registry member, the chunk's bytes, its TTL (seconds).
_CHUNK_LUA = """
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[4])
return 1
"""

# KEYS: purges, registry, meta, the n new chunks, then the chunks of the meta it replaces.
# ARGV: purge count, n, new member, new meta, the meta as read ('' none), its member ('').
# 1: switched; 0: refused (a purge since, or a chunk expired: the new chunks dropped);
# -1: the meta changed since it was read (read it again).
_SWITCH_LUA = """
local n = tonumber(ARGV[2])
local function drop_new()
  for i = 4, 3 + n do redis.call('DEL', KEYS[i]) end
  redis.call('SREM', KEYS[2], ARGV[3])
end
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then
  drop_new()
  return 0
end
if (redis.call('GET', KEYS[3]) or '') ~= ARGV[5] then return -1 end
for i = 4, 3 + n do
  if redis.call('EXISTS', KEYS[i]) == 0 then drop_new() return 0 end
end
for i = 4, 3 + n do redis.call('PERSIST', KEYS[i]) end
redis.call('SET', KEYS[3], ARGV[4])
for i = 4 + n, #KEYS do redis.call('DEL', KEYS[i]) end
if ARGV[6] ~= '' then redis.call('SREM', KEYS[2], ARGV[6]) end
return 1
"""

# KEYS: meta, registry, its chunks. ARGV: the meta as read, its member ('' none).
_DROP_LUA = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 1, #KEYS do if i ~= 2 then redis.call('DEL', KEYS[i]) end end
if ARGV[2] ~= '' then redis.call('SREM', KEYS[2], ARGV[2]) end
return 1
"""

# KEYS: registry, the metas of every field, then chunks. ARGV: the purge count (a meta
# saved before it is deleted; -1: every meta), the number of metas, the members to forget.
_PURGE_LUA = """
local count, metas = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 2, 1 + metas do
  local raw = redis.call('GET', KEYS[i])
  if raw then
    local ok, meta = pcall(cjson.decode, raw)
    if count < 0 or not ok or type(meta) ~= 'table' or tonumber(meta['purges']) == nil
        or tonumber(meta['purges']) < count then
      redis.call('DEL', KEYS[i])
    end
  end
end
for i = 2 + metas, #KEYS do redis.call('DEL', KEYS[i]) end
for i = 3, #ARGV do redis.call('SREM', KEYS[1], ARGV[i]) end
return 1
"""


@functools.cache
def _script(source: str):
    return store.get_client().register_script(source)


def _meta_key(user_id: str, field_name: str) -> str:
    return store.key(user_id, "snap", field_name)


def _chunk_keys(user_id: str, field_name: str, token: str, count: int) -> list[str]:
    return [store.key(user_id, "snap", field_name, token, str(i)) for i in range(count)]


def _registry(user_id: str) -> str:
    return store.key(user_id, "snaps")


def _member(field_name: str, token: str, count: int, purge_count: int) -> str:
    return f"{field_name}/{token}/{count}/{purge_count}/{int(time.time())}"


def _parse_member(member) -> tuple[str, str, int, int, int] | None:
    parts = store.text(member).split("/")
    try:
        field_name, token, count, purge_count, at = parts
        return field_name, token, int(count), int(purge_count), int(at)
    except ValueError:
        return None


def purges(client, user_id: str) -> int:
    """How many purges the namespace has had (Redis's count). Raises ``redis.RedisError``."""
    return int(client.get(store.key(user_id, "purges")) or 0)


def _delete(client, user_id: str, count: int) -> None:
    """Delete the namespace's snapshots and registered chunks saved before purge ``count``
    (``-1``: all of them)."""
    members = [(m, _parse_member(m)) for m in client.smembers(_registry(user_id))]
    stale = [(store.text(m), p) for m, p in members
             if p is None or count < 0 or p[3] < count]
    chunks = [key for _, p in stale if p is not None for key in _chunk_keys(user_id, *p[:3])]
    metas = [_meta_key(user_id, f) for f in index_fields.ANALYZERS]
    _script(_PURGE_LUA)(keys=[_registry(user_id), *metas, *chunks],
                        args=[count, len(metas), *(m for m, _ in stale)], client=client)


def purged(client, user_id: str) -> None:
    """Count a purge of the namespace, then delete every snapshot and chunk saved before it
    (a save under way writes nothing more: its count is no longer the namespace's). Call
    after the purged memories left the index. Raises ``redis.RedisError``."""
    count = client.incr(store.key(user_id, "purges"))
    _delete(client, user_id, int(count))


def discard(user_id: str) -> None:
    """Delete every snapshot of the namespace from Redis (the next background build or the
    worker's refresh saves them again). Never raises: a Redis failure is logged."""
    try:
        _delete(store.get_client(), user_id, -1)
    except store.RedisError as exc:
        log.warning("serving index snapshots of %s not deleted: %s", user_id,
                    type(exc).__name__)


def _entry(client, user_id: str, entry_id: str) -> dict[str, str] | None:
    """The fields of one stream entry (None: the stream does not hold it)."""
    held = client.xrange(store.key(user_id, "stream"), min=entry_id, max=entry_id)
    if len(held) != 1:
        return None
    return {store.text(k): store.text(v) for k, v in held[0][1].items()}


def describe(client, user_id: str, field_name: str) -> dict | None:
    """The meta of the field's snapshot as saved (see the module docstring; ``bytes`` its
    size in Redis, ``chunks`` their count), or None (none, or unreadable). Raises
    ``redis.RedisError``."""
    raw = client.get(_meta_key(user_id, field_name))
    try:
        return json.loads(raw) if raw is not None else None
    except ValueError:
        return None


def save(client, user_id: str, field_name: str, index: FieldIndex, *, gen: str, format: str,
         last_id: str, added: int, purge_count: int) -> bool:
    """Save ``index`` (as of stream entry ``last_id``, the ``added``-th, built after
    ``purge_count`` purges) as the field's snapshot: True when saved. Not saved: an index as
    of an empty stream or of an entry the stream no longer holds (nothing could vouch for
    it), one a purge overtook, one no newer than the snapshot in place. ``index`` is merged
    (its caller holds its lock). Raises ``redis.RedisError``."""
    if last_id == "0-0" or purges(client, user_id) != purge_count:
        return False
    entry = _entry(client, user_id, last_id)
    if entry is None:
        return False
    blob, layout = encode(index)
    token = secrets.token_hex(6)
    chunks = [blob[at:at + CHUNK_BYTES] for at in range(0, max(len(blob), 1), CHUNK_BYTES)]
    keys = _chunk_keys(user_id, field_name, token, len(chunks))
    member = _member(field_name, token, len(chunks), purge_count)
    registry, purges_key = _registry(user_id), store.key(user_id, "purges")
    for key, chunk in zip(keys, chunks, strict=True):
        if not _script(_CHUNK_LUA)(keys=[purges_key, registry, key],
                                   args=[purge_count, member, chunk, PENDING_SECONDS],
                                   client=client):
            _forget(client, registry, member, keys)  # a purge came between
            return False
    meta = json.dumps({
        "version": VERSION, "namespace": store.namespace_base(user_id), "field": field_name,
        "gen": gen, "format": format, "last_id": last_id, "added": added, "entry": entry,
        "purges": purge_count, "token": token, "chunks": len(chunks), "member": member,
        "bytes": len(blob), "crc32": zlib.crc32(blob), "saved_at": time.time(), **layout},
        sort_keys=True)
    for _attempt in range(5):
        old_raw = client.get(_meta_key(user_id, field_name))
        old = _old(old_raw)
        if old is not None and (_gen(old["gen"]) > _gen(gen) or (
                (old["gen"], old["format"]) == (gen, format) and old["added"] >= added)):
            _forget(client, registry, member, keys)  # the one in place is as new
            return False
        old_keys, old_member = [], ""
        if old is not None:
            old_keys = _chunk_keys(user_id, field_name, old["token"], old["chunks"])
            old_member = old["member"]
        done = _script(_SWITCH_LUA)(
            keys=[purges_key, registry, _meta_key(user_id, field_name), *keys, *old_keys],
            args=[purge_count, len(keys), member, meta,
                  "" if old_raw is None else old_raw, old_member], client=client)
        if done != -1:
            if done == 1:
                _prune(client, user_id, field_name, token)
            return done == 1
    _forget(client, registry, member, keys)
    return False


def _gen(gen: str) -> int:
    """A generation stamp as a number ("" = 0; an unreadable one counts as the oldest)."""
    try:
        return int(gen or 0)
    except ValueError:
        return -1


def _old(raw) -> dict | None:
    """What a save needs of the meta it replaces: gen, format, added, token, chunks, member
    (None: no meta, or one unreadable, whose chunks the registry's pruning finds)."""
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
        return {"gen": meta["gen"], "format": meta["format"], "added": int(meta["added"]),
                "token": str(meta["token"]), "chunks": int(meta["chunks"]),
                "member": meta.get("member", "")}
    except (ValueError, KeyError, TypeError):
        return None


def _forget(client, registry: str, member: str, keys: list[str]) -> None:
    """Drop the chunks of a save that was not switched to, and their registry member."""
    client.delete(*keys)
    client.srem(registry, member)


def _prune(client, user_id: str, field_name: str, token: str) -> None:
    """Forget the field's chunk sets older than ``PENDING_SECONDS`` other than ``token``'s:
    a saver's that died before its switch (expired by then), or those of a meta that could
    not be read when it was replaced."""
    registry = _registry(user_id)
    limit = time.time() - PENDING_SECONDS
    for raw in client.smembers(registry):
        parsed = _parse_member(raw)
        if parsed is None:
            client.srem(registry, raw)
        elif parsed[0] == field_name and parsed[1] != token and parsed[4] < limit:
            _forget(client, registry, store.text(raw),
                    _chunk_keys(user_id, field_name, parsed[1], parsed[2]))


def _read(client, user_id: str, keys: list[str]) -> bytes | None:
    """The chunks' bytes joined (None: one is missing), ``READ_BATCH`` GETs a round trip."""
    parts = []
    for at in range(0, len(keys), READ_BATCH):
        pipe = store.NamespacePipelines(client).for_namespace(user_id)
        for key in keys[at:at + READ_BATCH]:
            pipe.execute_command("GET", key, **{NEVER_DECODE: []})
        got = pipe.execute()
        if any(part is None for part in got):
            return None
        parts.extend(got)
    return b"".join(parts)


def _drop(client, user_id: str, field_name: str, raw, meta: dict) -> None:
    """Delete the field's snapshot ``raw`` (its meta as read) unless replaced meanwhile."""
    try:
        keys = _chunk_keys(user_id, field_name, str(meta["token"]), int(meta["chunks"]))
        member = str(meta.get("member", ""))
    except (KeyError, TypeError, ValueError):
        keys, member = [], ""
    _script(_DROP_LUA)(keys=[_meta_key(user_id, field_name), _registry(user_id), *keys],
                       args=[raw, member], client=client)


def read(client, user_id: str, field_name: str) -> FieldIndex | None:
    """The field's snapshot as saved, whatever the live index (what it holds: operators,
    tests), or None when there is none. Raises ValueError or ``zstandard.ZstdError`` when
    it is damaged, ``redis.RedisError``."""
    meta = describe(client, user_id, field_name)
    if meta is None:
        return None
    blob = _read(client, user_id,
                 _chunk_keys(user_id, field_name, str(meta["token"]), int(meta["chunks"])))
    if blob is None or zlib.crc32(blob) != meta["crc32"]:
        raise ValueError("a chunk is missing or damaged")
    return decode(blob, meta)


def load(client, user_id: str, field_name: str, head: dict) -> tuple[FieldIndex, dict] | None:
    """``(index, meta)`` of the field's snapshot when it describes the live index as of a
    stream position it can be caught up from (``head``: a ``feed.feed_reply`` with no
    entries: generation, format, stream length and entries added); None otherwise. ``meta``
    holds ``gen``, ``format``, ``last_id`` and ``added``. A snapshot from before a purge, or
    damaged, is deleted (and logged when damaged). Raises ``redis.RedisError``."""
    for _attempt in range(2):
        raw = client.get(_meta_key(user_id, field_name))
        if raw is None:
            return None
        meta = None
        try:
            meta = json.loads(raw)
            if (meta["version"] != VERSION or meta["namespace"] != store.namespace_base(user_id)
                    or meta["field"] != field_name or meta["gen"] != head["gen"]
                    or meta["format"] != head["format"]
                    # the stream still holds the entry it was saved after (so every later one)
                    or not head["added"] - head["length"] < meta["added"] <= head["added"]
                    or head["added"] - meta["added"] > MAX_BEHIND
                    # the very entry: its id and its fields (a recreated stream, with an
                    # entry of that id, would not hold both at that position)
                    or _entry(client, user_id, meta["last_id"]) != meta["entry"]):
                return None
            if meta["purges"] != purges(client, user_id):
                # Saved before a purge: it may hold the purged terms. Not kept.
                _drop(client, user_id, field_name, raw, meta)
                return None
            keys = _chunk_keys(user_id, field_name, str(meta["token"]), int(meta["chunks"]))
            blob = _read(client, user_id, keys)
            if blob is None:
                if client.get(_meta_key(user_id, field_name)) != raw:
                    continue  # replaced by a newer save while it was read: read that one
                raise ValueError("a chunk is missing")
            if len(blob) != meta["bytes"] or zlib.crc32(blob) != meta["crc32"]:
                raise ValueError("its bytes differ from those saved (length or checksum)")
            index = decode(blob, meta)
        except store.RedisError:
            raise
        except Exception as exc:  # damaged in any way: dropped, and built again
            log.warning("serving index snapshot of %s/%s ignored and removed: %r", user_id,
                        field_name, exc)
            _drop(client, user_id, field_name, raw, meta if isinstance(meta, dict) else {})
            return None
        return index, meta
    return None
