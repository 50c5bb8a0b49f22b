"""Serving indexes saved on this host's disk, so a process loads one instead of building it.

A large namespace's serving index takes seconds per 100k memories to build from Redis
(``feed._build``), in every process that serves it: each gunicorn worker, again after every
restart, and meanwhile its recalls read the postings in chunks (``search.serving.chunked``),
slower. After a background build, the process saves the index here
(``MEMORY_SERVING_SNAPSHOT_DIR``, one ``.npz`` per namespace and field, written to a
temporary file and renamed, so a reader never sees half of one); a process without that
index loads it (a fraction of a second) and catches it up from the namespace's write stream
as usual, from the position it was saved at.

A snapshot is used only when it can be proved to describe this namespace's live index:
same key prefix, namespace and field, same generation and format stamp, and the write stream
still holds the very entry it was saved after (its id and its fields), at the same count of
entries added (another Redis, or a stream recreated or trimmed past it, cannot), no more
than ``MAX_BEHIND`` entries back. After the catch-up the
field's N and total length must equal the statistics in Redis, or the index is built from
Redis after all (``feed.serving_index``). Arrays only (``allow_pickle=False``); a damaged or
unreadable file is logged, removed and built again.

A purge must leave no copy of the purged text, snapshots on every host included, while the
purging process can reach only its own host's disk. So every purge counts itself in Redis
(``<base>purges``, :func:`purged`), a snapshot records the count read before its build began,
and a loader on any host that finds the count moved removes the file instead of loading it;
a build that a purge overtook saves a file no loader will take.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path

import numpy as np
from django.conf import settings

from memories import store
from search.index import fields as index_fields
from search.serving.engine import FieldIndex

log = logging.getLogger(__name__)

VERSION = 1
# A snapshot further behind the stream than this many entries is not loaded: its catch-up
# (64 entries a feed.lua call) would hold the recall that loads it, and every other recall
# of the namespace, for longer than a build in the background costs them.
MAX_BEHIND = 2000


def path_for(user_id: str, field_name: str) -> Path | None:
    """The snapshot file of one field of one namespace (None: snapshots are off)."""
    root = getattr(settings, "MEMORY_SERVING_SNAPSHOT_DIR", "")
    if not root:
        return None
    name = f"{store.namespace_base(user_id)}|{field_name}"
    return Path(root) / f"{hashlib.sha256(name.encode()).hexdigest()[:32]}.npz"


def purges(client, user_id: str) -> int:
    """How many purges the namespace has had (Redis's count)."""
    return int(client.get(store.key(user_id, "purges")) or 0)


def purged(client, user_id: str) -> None:
    """Count a purge of the namespace: every snapshot saved before it is refused (and
    removed) by the next loader on any host. Raises ``redis.RedisError``."""
    client.incr(store.key(user_id, "purges"))


def discard(user_id: str) -> None:
    """Remove the namespace's snapshots from this host's disk (a purge: they hold the
    purged memories' terms; the next background build saves them again without). Never
    raises for the disk: a file that cannot be removed is logged."""
    for field_name in index_fields.ANALYZERS:
        path = path_for(user_id, field_name)
        if path is None:
            return
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("serving index snapshot of %s/%s not removed: %s", user_id,
                        field_name, exc)


def _entry(client, user_id: str, entry_id: str) -> dict[str, str] | None:
    """The fields of one stream entry (None: the stream does not hold it)."""
    held = client.xrange(store.key(user_id, "stream"), min=entry_id, max=entry_id)
    if len(held) != 1:
        return None
    return {store.text(k): store.text(v) for k, v in held[0][1].items()}


def save(client, user_id: str, field_name: str, index: FieldIndex, *, gen: str, format: str,
         last_id: str, added: int, purge_count: int) -> None:
    """Write ``index`` (as of stream entry ``last_id``, the ``added``-th, built after
    ``purge_count`` purges) to its file, with that entry's fields (which a loader compares);
    an index as of an empty stream is not
    written (nothing could vouch for it). Raises ``redis.RedisError``; never raises for the
    disk: a failed write is logged and the file left as it was."""
    path = path_for(user_id, field_name)
    entry = None if path is None or last_id == "0-0" else _entry(client, user_id, last_id)
    if entry is None:
        return
    arrays, names = index.arrays()
    meta = {"version": VERSION, "namespace": store.namespace_base(user_id),
            "field": field_name, "gen": gen, "format": format, "last_id": last_id,
            "added": added, "entry": entry, "purges": purge_count, **names}
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
            f.flush()
            os.fsync(f.fileno())  # a crash leaves the old file or the whole new one
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("serving index snapshot of %s/%s not written: %s", user_id, field_name, exc)
        tmp.unlink(missing_ok=True)


def load(client, user_id: str, field_name: str, head: dict) -> tuple[FieldIndex, dict] | None:
    """``(index, meta)`` of the namespace's snapshot when it describes the live index as of
    a stream position it can be caught up from (``head``: a ``feed.feed_reply`` with no
    entries: generation, format, stream length and entries added); None otherwise. ``meta``
    holds ``gen``, ``format``, ``last_id`` and ``added``. Raises ``redis.RedisError``."""
    path = path_for(user_id, field_name)
    if path is None or not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]))
            if (meta["version"] != VERSION or meta["namespace"] != store.namespace_base(user_id)
                    or meta["field"] != field_name or meta["gen"] != head["gen"]
                    or meta["format"] != head["format"]
                    # the stream still holds the entry it was saved after (so every later one)
                    or not head["added"] - head["length"] < meta["added"] <= head["added"]
                    or head["added"] - meta["added"] > MAX_BEHIND
                    # the very entry: its id and its fields (another Redis, a clone, a
                    # recreated stream would not hold both at that position)
                    or _entry(client, user_id, meta["last_id"]) != meta["entry"]):
                return None
            if meta.get("purges") != purges(client, user_id):
                # Built before a purge: it may hold the purged terms. Not kept anywhere.
                path.unlink(missing_ok=True)
                return None
            index = FieldIndex.from_arrays({name: z[name] for name in FieldIndex.ARRAYS}, meta)
    except store.RedisError:
        raise
    except Exception as exc:  # a damaged file of any kind: dropped, and built again
        log.warning("serving index snapshot of %s/%s ignored and removed: %r", user_id,
                    field_name, exc)
        path.unlink(missing_ok=True)
        return None
    return index, meta
