"""The row cache's generation, watched instead of read on every request.

``memories.generation_cache`` drops a process's cached tokens and profiles when the
generation key changes. Reading that key costs a Redis round trip on every API request (as
much wall time as the recall's own ``feed.lua`` call on a loaded machine), so each process
subscribes instead to a shard channel named like the key (SSUBSCRIBE: in a Redis Cluster the
channel lives on the node that holds the key's slot), and every bump publishes the new
generation there right after it sets the key (:func:`announce`). Before each use the process
drains, without blocking, what its subscription has received: one poll of a socket, no round
trip. Redis writes the publication to subscribers in the same event-loop pass as the bumping
client's reply, so a request that follows a bump, from any client that saw the bump return,
finds it already waiting in the socket.

Trust is withdrawn, and the caller reads the key (``read``), whenever the watch cannot be sure
it saw every change: until its subscription's confirmation has come (it is never waited
for: a request never blocks on the watch) and the key has been read after it; after a
reconnect, or any message that is not a publication (a re-subscription, a slot that moved
away); on any error
(tried again after ``_RETRY_SECONDS``); in a forked child (a subscription belongs to one
process); and every ``MEMORY_ROW_CACHE_VERIFY_SECONDS`` (default 1 s, 0 = every request),
which bounds what a silently broken connection, or a writer that sets the key without
publishing (an older release during a rolling restart, an operator's SET), could leave stale.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable

import redis
from django.conf import settings

from memories import store

__all__ = ["announce", "current", "forget"]

log = logging.getLogger(__name__)

_RETRY_SECONDS = 1.0
_NEVER = float("-inf")  # "verified" of a generation never read from the key
_lock = threading.Lock()
# One watch per process: pid (a forked child starts its own), the client it watches through
# (another client, e.g. a new REDIS_URL, starts another), the subscription, the last
# generation it knows, when that was last read from the key, when to try subscribing again.
_watch: dict = {"pid": None, "client": None, "pubsub": None, "confirmed": False,
                "reconnected": False, "generation": None, "verified": _NEVER, "retry_at": 0.0}
_now = time.monotonic  # the watch's clock (tests move it)


class _Distrust(Exception):
    """A message that is not a publication: the watch may have missed one."""


def channel() -> str:
    """The shard channel of the generation: named like its key, so both share a slot."""
    return store.global_key("rowcache:generation")


def announce(client, generation: str) -> None:
    """Publish ``generation`` (already SET in the key) to every process's watch. Raises
    store.RedisError."""
    client.spublish(channel(), generation)


def current(read: Callable[[], str]) -> str:
    """The current generation: the watched one while it can be trusted, else ``read()`` (a
    GET of the key, which also starts or re-verifies the watch). Raises what ``read`` raises
    (store.RedisError)."""
    now = _now()
    with _lock:
        client = store.get_client()
        if _watch["pid"] != os.getpid() or _watch["client"] is not client:
            _reset(pid=os.getpid())  # never read the parent's socket
            _watch["client"] = client
        if _watch["pubsub"] is None and now >= _watch["retry_at"]:
            _subscribe(client)
        if _watch["pubsub"] is not None and _drain(now) and _watch["confirmed"]:
            if now - _watch["verified"] < settings.MEMORY_ROW_CACHE_VERIFY_SECONDS:
                return _watch["generation"]
            # Due a check (or the first since the subscription was confirmed): read the key
            # under the lock, so a publication drained by another thread meanwhile cannot be
            # overwritten by this older read.
            _watch["generation"], _watch["verified"] = read(), now
            return _watch["generation"]
    return read()


def forget() -> None:
    """Drop this process's watch (tests; the next :func:`current` subscribes again)."""
    with _lock:
        _reset(pid=_watch["pid"])


def _reset(*, pid, retry_at: float = 0.0) -> None:
    pubsub = _watch["pubsub"]
    if pubsub is not None and _watch["pid"] == os.getpid():  # a parent's socket stays open
        with contextlib.suppress(redis.RedisError, OSError):
            pubsub.close()
    _watch.update(pid=pid, client=None, pubsub=None, confirmed=False, reconnected=False,
                  generation=None, verified=_NEVER, retry_at=retry_at)


def _node_client(client):
    """A client of the node that serves the channel (the client itself when not a cluster)."""
    if store.is_cluster(client):
        return client.get_node_from_key(channel()).redis_connection
    return client


class _Reconnects:
    """redis-py reconnects a pub/sub connection by itself and subscribes again: what was
    published meanwhile is lost, so the watch is dropped at its next drain. (redis-py keeps
    connect callbacks as weak methods, hence a method of a module-level object.)"""

    def seen(self, connection) -> None:
        _watch["reconnected"] = True


_reconnects = _Reconnects()


def _subscribe(client) -> None:
    """Send the subscription without waiting for its confirmation: until a drain finds it,
    and the key has been read after it, the watch vouches for nothing."""
    try:
        pubsub = _node_client(client).pubsub()
        pubsub.ssubscribe(channel())
        pubsub.connection.register_connect_callback(_reconnects.seen)
    except (redis.RedisError, OSError) as exc:
        log.info("row cache generation not watched: %s", type(exc).__name__)
        _reset(pid=os.getpid(), retry_at=_now() + _RETRY_SECONDS)
        _watch["client"] = client
        return
    _watch.update(client=client, pubsub=pubsub, confirmed=False, reconnected=False,
                  generation=None, verified=_NEVER)


def _drain(now: float) -> bool:
    """Take every waiting message; False (the watch dropped) when it may have missed one."""
    try:
        while (message := _watch["pubsub"].get_message(timeout=0.0)) is not None:
            kind = store.text(message["type"])
            if kind == "ssubscribe" and not _watch["confirmed"]:
                _watch["confirmed"] = True  # no publication after this one is missed
            elif kind == "smessage":
                _watch["generation"] = store.text(message["data"])
            else:  # a second confirmation (a re-subscription), a slot moved away, ...
                raise _Distrust(kind)
        if _watch["reconnected"]:
            raise _Distrust("reconnected")
    except (redis.RedisError, OSError, _Distrust) as exc:
        log.info("row cache generation watch dropped: %s", type(exc).__name__)
        client = _watch["client"]
        _reset(pid=os.getpid(), retry_at=now + _RETRY_SECONDS)
        _watch["client"] = client
        return False
    return True
