"""Answering a search from a process's serving index (``search.serving.feed``) in one
Redis round trip: the search on the index as it stands, then one ``feed.lua`` call that
proves it current and brings the hits' hot-store hashes (and counts their recall hits)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from memories import store
from search.serving.documents import hash_of
from search.serving.feed import (
    FEED_COUNT,
    NotReady,
    apply_reply,
    catch_up,
    feed_reply,
    serving_index,
    unchanged,
)
from search.serving.field_search import Found
from search.serving.held_indexes import Served, counters, entry, evict_for
from search.serving.partial import partial

# At most this many hits' hashes ride along with the freshness check (one bounded script,
# whose Redis time grows with the hashes it returns; a re-ranked window of
# MEMORY_RERANK_WINDOW = 100 fits).
ROWS_WITH_FEED = 100
# Searches on the index as it stands before the catch-up path takes over: each one that
# finds writes since applies them (they came with its reply) and searches again.
FAST_ATTEMPTS = 3
# The most stream entries :func:`written_between` reads (one XRANGE well under a millisecond;
# between a window's two reads a millisecond apart, a busy namespace writes a few).
WRITTEN_BETWEEN_MAX = 1000
# A recall waiting for its index's background build looks again this often (seconds): a
# build that failed is started again by the next look.
BUILD_POLL_SECONDS = 0.5


def search(client, *, user_id: str, field_name: str, terms: list[str], k: int, k1: float,
           b: float, mode: str, now: float, conversation_id: str | None = None,
           types: list[str] | None = None, with_hashes: bool = False,
           hit_time: float | None = None, hash_fields: tuple[str, ...] = (),
           prefetch=None, valid: tuple[float, float] | None = None,
           wait: float = 0.0) -> Found:
    """``field_search.Found`` of the caught-up serving index (see ``FieldIndex.search``); with
    ``with_hashes``, ``found.hashes`` maps each hit's memory id to its hot-store hash (absent
    when Redis no longer holds it), or with ``hash_fields`` to those fields of it as a
    ``search.serving.partial.Partial``.

    ``hit_time`` (epoch seconds): count one recall hit on every row held in Redis, in the
    same script (``found.counted``; ``found.unlisted`` when the namespace then holds pending
    hits without its mark in the pending set: the caller adds it,
    ``memories.access.access_pending_add``). Only with ``with_hashes``.

    ``wait`` (seconds): how long to wait for an index this process builds in the background
    (a large namespace's first recall, ``feed.serving_index``); past it, raises
    ``feed.NotReady``. Also raises ``feed.Unsupported`` (a format this process does not
    serve) and ``redis.RedisError``.

    Fast path, one round trip: search the index as it stands, then one ``feed.lua`` call
    that reports whether anything was written since (read-your-writes: a returned write is
    in the stream) and, if not, returns the hits' hashes. When something was, the entries
    came with that reply: apply them and search again, answering at once when the new hits
    are among the old ones (their hashes came with the same reply). An index not built or not checked
    yet, or one that cannot follow the stream (a gap, a swap), is caught up or rebuilt
    first (``serving_index``). After ``FAST_ATTEMPTS`` replies that each brought new writes,
    the search runs on the caught-up index under its lock and the hashes come in one
    pipeline (hits uncounted: the caller counts them).

    ``valid``: the validity range the index keeps (``FieldIndex.search``).

    ``prefetch(ids)``: the caller's own read of a search's hit ids (its database check),
    run while Redis answers the check of that search (``feed.feed_reply``'s ``meanwhile``),
    so the two waits overlap; ``found.prefetched`` is ``(ids, its result)`` (None when the
    answer came another way). The caller reads again when the ids do not cover the hits.
    """
    ask = _Ask(terms, {"k": k, "k1": k1, "b": b, "mode": mode, "now": now, "types": types,
                       "valid": valid, "conversation_id": conversation_id},
               with_hashes, hash_fields, prefetch,
               {"hit_time": hit_time, "hash_fields": hash_fields} if with_hashes else {})
    served = entry(user_id, field_name)
    deadline = time.monotonic() + wait
    for _ in range(FAST_ATTEMPTS):
        with served.lock:
            ready = served.index is not None and not served.unverified and served.thread is None
            step = _attempt(client, user_id, field_name, served, ask) if ready else _HOLD
        if isinstance(step, Found):
            return step
        if step is _TOO_MANY:
            break
        if step is _HOLD:
            # Not built, not checked, or a gap, a swap, a mismatch: catch up (or rebuild),
            # then the one-round-trip search again.
            served, _ = _held(client, user_id, field_name, deadline)
            served.lock.release()
    served, index = _held(client, user_id, field_name, deadline)
    try:
        found = index.search(terms, **ask.kwargs)
        found.position = (served.last_id, served.added)
    finally:
        served.lock.release()
    if with_hashes:
        found.hashes = hashes(client, user_id, [r[0] for r in found.rows], fields=hash_fields)
    return found


@dataclass
class _Ask:
    """One :func:`search`: its terms and index arguments, what it reads with the hits, and
    what its attempts share (the caller's read made while Redis answered; whether applied
    writes grew the index)."""

    terms: list[str]
    kwargs: dict
    with_hashes: bool
    hash_fields: tuple[str, ...]
    prefetch: object
    extra: dict
    prefetched: tuple | None = None
    grew: bool = False


# What an attempt that does not answer leads to: more hits than one reply carries (search
# under the lock), writes applied (search again), or an index to catch up or rebuild first.
_TOO_MANY, _AGAIN, _HOLD = "too many", "again", "hold"


def _attempt(client, user_id: str, field_name: str, served: Served, ask: _Ask):
    """One search of the index as it stands (``served.lock`` held) with one ``feed.lua``
    check: the ``Found`` when it is proved current, else ``_TOO_MANY``, ``_AGAIN`` or
    ``_HOLD``."""
    found = served.index.search(ask.terms, **ask.kwargs)
    hit_ids = [r[0] for r in found.rows]
    ids = hit_ids if ask.with_hashes else []
    if len(ids) > ROWS_WITH_FEED:
        return _TOO_MANY
    # Read once per recall unless the hits change (an attempt after writes, a rebuild): the
    # read of an earlier attempt serves when it covers them.
    again = ask.prefetch is not None and not (
        ask.prefetched is not None and ask.prefetched[0].issuperset(hit_ids))
    ask.extra["meanwhile"] = (lambda: ask.prefetch(hit_ids)) if again else None
    got = _checked(client, user_id, field_name, served, ids, ask.extra)
    if again:
        ask.prefetched = (frozenset(hit_ids), got["meanwhile"])
    if unchanged(got, served):
        if ask.with_hashes:
            _fill(found, ids, got, ask.hash_fields)
        counters.fast += 1
        # Count what the applied writes added (O(1)).
        return _answered(found, served, ask, user_id, field_name, evict=ask.grew)
    state = apply_reply(got, served)
    if state == "ok":
        # Every write up to the moment the script ran is applied now, so a search of the
        # index is as fresh as a second check would prove it; it is answered at once when
        # its hits are among those whose hashes came with the reply (read in the same
        # atomic step as the writes).
        found = served.index.search(ask.terms, **ask.kwargs)
        if _answer_from(found, ids, got, ask.with_hashes, ask.hash_fields):
            counters.caught += 1
            return _answered(found, served, ask, user_id, field_name, evict=True)
    if state == "more":  # more writes than one bounded reply holds
        state = catch_up(client, user_id, field_name, served)
    if state == "ok":
        ask.grew = True
        return _AGAIN  # the writes came with the reply: search again
    return _HOLD


def _answered(found: Found, served: Served, ask: _Ask, user_id: str, field_name: str, *,
              evict: bool) -> Found:
    found.position = (served.last_id, served.added)
    found.prefetched = ask.prefetched
    served.used = time.monotonic()
    if evict:
        evict_for(user_id, field_name)
    return found


def _held(client, user_id: str, field_name: str, deadline: float):
    """``feed.serving_index`` (its lock held), waiting up to ``deadline`` (``time.monotonic``)
    for a build on a background thread: a large namespace's first recall in this process
    waits for its index rather than being answered another way. Raises NotReady past it."""
    while True:
        try:
            return serving_index(client, user_id, field_name)
        except NotReady:
            left = deadline - time.monotonic()
            if left <= 0:
                raise
            thread = entry(user_id, field_name).thread
            if thread is not None:  # None: it ended meanwhile (or failed: built again)
                thread.join(min(left, BUILD_POLL_SECONDS))


def _checked(client, user_id: str, field_name: str, served: Served, ids: list[str],
             extra: dict) -> dict:
    """``feed.lua`` after ``served.last_id`` with the hits ``ids``."""
    try:
        return feed_reply(client, user_id, field_name, served.last_id, FEED_COUNT, ids, **extra)
    except store.OutOfMemoryError:
        if not extra.get("hit_time"):
            raise
        # Redis is full and refuses the counting writes: the search stands, its hits go
        # uncounted (found.counted stays False; the caller's own count fails alike).
        extra["hit_time"] = None
        return feed_reply(client, user_id, field_name, served.last_id, FEED_COUNT, ids, **extra)


def _answer_from(found, ids: list[str], got: dict, with_hashes: bool,
                 hash_fields: tuple[str, ...] = ()) -> bool:
    """Fill ``found`` (a search made after applying ``got``'s writes) from ``got``, the reply
    to the check of the search before, when that reply holds what ``found`` needs: nothing
    (no hashes asked) or the hashes of all of ``found``'s hits. Its hits go uncounted (the
    script counts only when no write was read): the caller counts them."""
    if not with_hashes:
        return True
    new = [r[0] for r in found.rows]
    if not set(new) <= set(ids):
        return False
    _fill(found, ids, got, hash_fields)
    found.hashes = {m: found.hashes[m] for m in new if m in found.hashes}
    found.counted = found.unlisted = False
    return True


def _fill(found, ids: list[str], got: dict, hash_fields: tuple[str, ...] = ()) -> None:
    found.hashes = {}
    for memory_id, raw in zip(ids, got["hashes"], strict=True):
        if raw:
            found.hashes[memory_id] = partial(hash_of(raw)) if hash_fields else hash_of(raw)
    found.counted, found.unlisted = got["counted"], got["unlisted"]


def rows(client, *, user_id: str, field_name: str, memory_ids: list[str],
         hit_time: float | None = None) -> Found:
    """The hot-store hashes of ``memory_ids`` (at most ``ROWS_WITH_FEED``) in one
    ``feed.lua`` call that reads no stream entry: ``Found`` with ``hashes``, ``counted``,
    ``unlisted`` and ``position`` filled as :func:`search` fills them (ids Redis does not
    hold are left out). For the results of a search already proved current, ranked after
    it."""
    found = Found(0, 0, {})
    if not memory_ids:
        found.hashes = {}
        return found
    extra = {"hit_time": hit_time}
    try:
        got = feed_reply(client, user_id, field_name, "0-0", 0, memory_ids, **extra)
    except store.OutOfMemoryError:
        if hit_time is None:
            raise
        extra["hit_time"] = None  # Redis refuses the counting writes: the hits go uncounted
        got = feed_reply(client, user_id, field_name, "0-0", 0, memory_ids, **extra)
    _fill(found, memory_ids, got)
    found.position = (got["top"], got["added"])
    return found


def written_between(client, user_id: str, since: tuple[str, int], until: tuple[str, int],
                    field_name: str = "") -> set[str] | None:
    """The memory ids written after stream position ``since`` up to ``until`` (each
    ``(entry id, entries added)``, as ``Found.position``), in one XRANGE of at most
    ``WRITTEN_BETWEEN_MAX`` entries; with ``field_name``, only those whose write changed
    that field's document (an entry without the list of fields changed them all), or were
    deleted. None when that cannot be told: more entries than that, or the stream no longer
    holds them all (trimmed past ``since``, or recreated)."""
    (start, before), (end, after) = since, until
    if after == before and end == start:
        return set()
    if not 0 < after - before <= WRITTEN_BETWEEN_MAX:
        return None
    entries = client.xrange(store.key(user_id, "stream"), min="(" + start, max=end,
                            count=after - before)
    if len(entries) != after - before:
        return None
    out = set()
    for _, fields in entries:
        entry = {store.text(k): store.text(v) for k, v in fields.items()}
        changed = entry.get("f")
        if (not field_name or changed is None
                or field_name in {name.partition("@")[0] for name in changed.split(",")}):
            out.add(entry["id"])
    return out


def hashes(client, user_id: str, memory_ids: list[str],
           fields: tuple[str, ...] = ()) -> dict[str, dict[str, str]]:
    """Hot-store hashes of ``memory_ids`` (one pipeline), or with ``fields`` those fields
    of each as a ``Partial``; ids Redis does not hold are left out."""
    pipe = client.pipeline(transaction=False)
    for memory_id in memory_ids:
        if fields:
            pipe.hmget(store.key(user_id, "m", memory_id), fields)
        else:
            pipe.hgetall(store.key(user_id, "m", memory_id))
    out = {}
    for memory_id, raw in zip(memory_ids, pipe.execute(), strict=True):
        if fields:
            held = {f: store.text(v) for f, v in zip(fields, raw, strict=True) if v is not None}
            if held:  # every hash holds created_at: none held is a hash that is gone
                out[memory_id] = partial(held)
        elif raw:
            out[memory_id] = hash_of(raw)
    return out
