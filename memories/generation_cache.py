"""A per-process cache of rows that are read on every request and rarely change (API tokens
with their users and roles, ranking profiles, synonym sets), kept honest across processes.

One Redis key holds the *generation*, a random token that every change replaces
(:func:`bump`, run after the change commits, sets the key and publishes the token). Each read
compares the process's generation with it and drops the whole cache when they differ, so a
revoked token, a deactivated user or an edited profile is seen by every process with its next
request, not after a timeout. The process knows the generation from its subscription to the
bumps (``memories.generation_watch``: no round trip per request) and reads the key (one GET)
only when the watch cannot vouch for it. A random token rather than a counter: after a Redis flush a counter would
start again and could meet an old value. With Redis unreachable nothing is cached (every
read loads from the database) and the cache is dropped. Entries also expire after
``MEMORY_ROW_CACHE_SECONDS`` (default 60): the bound on staleness for a process that sat idle
through an outage in which a change could not bump the generation.

Within one HTTP request the generation is read once (:func:`request_started` /
:func:`request_finished`, connected in ``memories.apps``): the token check and the profile
lookup of a recall then cost one GET, not one each. A change that commits while a request
runs is seen by the next request, as if it had committed a moment later; a change made by
the request itself is seen at once (:func:`bump` forgets the request's generation).
"""

import logging
import secrets
import threading
import time

from django.conf import settings
from django.db import connection, transaction

from memories import generation_watch, store

log = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict = {"generation": None, "entries": {}}
_MISSING = object()
# The generation read by the request this thread serves (gthread: one request per thread at
# a time); ``active`` only between request_started and request_finished.
_request = threading.local()


def _key() -> str:
    return store.global_key("rowcache:generation")


def cached(name: str, load):
    """The value cached under ``name``, or ``load()`` (a database read) cached now.

    None is never cached: a miss costs a query each time, and keys nobody holds (guessed
    tokens) must not fill the cache. Nor is a value read inside a transaction, which may yet
    roll back. Values are shared by the threads of the process.
    """
    try:
        generation = _generation()
    except store.RedisError as exc:
        log.warning("row cache off, redis unreachable: %s", type(exc).__name__)
        clear()
        return load()
    now = time.monotonic()
    with _lock:
        if generation != _state["generation"]:
            _state["generation"], _state["entries"] = generation, {}
        expires, value = _state["entries"].get(name, (0.0, _MISSING))
    if value is not _MISSING and expires > now:
        return value
    value = load()
    # A value read inside a transaction may be rolled back, and a rollback bumps nothing.
    if connection.in_atomic_block:
        return value
    with _lock:
        if value is not None and _state["generation"] == generation:
            _state["entries"][name] = (now + settings.MEMORY_ROW_CACHE_SECONDS, value)
    return value


def _generation() -> str:
    """The current generation; a missing key (a flushed Redis) gets a fresh token first, so
    a process that cached before the flush cannot find its old generation again. Read once
    per request (see the module's docstring)."""
    memo = getattr(_request, "generation", None)
    if memo is not None:
        return memo
    generation = generation_watch.current(_read_generation)
    if getattr(_request, "active", False):
        _request.generation = generation
    return generation


def _read_generation() -> str:
    """GET the generation (a missing key gets a fresh token first). Raises store.RedisError."""
    client = store.get_client()
    generation = client.get(_key())
    if generation is None:
        client.set(_key(), secrets.token_hex(8), nx=True)
        generation = client.get(_key())
    return store.text(generation)


def request_started(**kwargs) -> None:
    """Signal receiver (``request_started``): this thread's request reads the generation
    once, on its first cached read."""
    _request.active, _request.generation = True, None


def request_finished(**kwargs) -> None:
    """Signal receiver (``request_finished``): the next request reads it afresh."""
    _request.active, _request.generation = False, None


def clear() -> None:
    """Drop this process's cache (other processes are told by :func:`bump`)."""
    _request.generation = None
    with _lock:
        _state["generation"], _state["entries"] = None, {}


def bump() -> None:
    """Invalidate every process's cache once the current transaction commits (at once when
    there is none). Never raises: with Redis down there is no cache to invalidate."""
    transaction.on_commit(_bump_now)


def _bump_now() -> None:
    clear()
    generation = secrets.token_hex(8)
    try:
        client = store.get_client()
        client.set(_key(), generation)
        generation_watch.announce(client, generation)
    except store.RedisError as exc:
        log.warning("row cache generation not bumped: %s", type(exc).__name__)


def bump_on_change(sender, **kwargs) -> None:
    """Signal receiver (post_save, post_delete, m2m_changed) for the cached models."""
    bump()
