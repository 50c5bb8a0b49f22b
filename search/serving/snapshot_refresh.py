"""The worker's merge of each large namespace's serving index snapshots with the writes
since (``search.serving.snapshot``), so a process that loads one catches up little.

A snapshot is saved after every background build, and then ages: each write after it is a
stream entry its loader must apply, and past ``snapshot.MAX_BEHIND`` entries it is not
loaded at all. The worker's periodic job (``operations.jobs.periodic_snapshot_refresh_job``)
and every reindex (a new generation: no snapshot of it yet) refresh, for each field of each
namespace of more than ``feed.SYNC_BUILD_DOCS`` documents (smaller ones build inline in
less time than a load), the snapshot that is missing, of another generation or format, or
more than ``MAX_BEHIND / 2`` entries behind: the worker's own serving index of the field
(loaded from that snapshot and caught up, or built), merged and saved.
"""

from __future__ import annotations

import logging

from memories import store
from search.index import fields as index_fields
from search.serving import feed, snapshot

log = logging.getLogger(__name__)

# Seconds the refresh waits for a build on feed's background thread.
BUILD_WAIT_SECONDS = 600


def stale(client, user_id: str, field_name: str, head: dict | None = None) -> bool:
    """True when the field's snapshot is missing, unreadable, of another version, generation
    or format, or further behind the write stream than ``MAX_BEHIND / 2`` entries (or past
    the stream's oldest entry). ``head``: a ``feed.feed_reply`` with no entries (read when
    None). Raises ``redis.RedisError``."""
    if head is None:
        head = feed.feed_reply(client, user_id, field_name, "0-0", 0)
    meta = snapshot.describe(client, user_id, field_name)
    try:
        return (meta["version"] != snapshot.VERSION or meta["gen"] != head["gen"]
                or meta["format"] != head["format"]
                or not head["added"] - head["length"] < meta["added"] <= head["added"]
                or head["added"] - meta["added"] > snapshot.MAX_BEHIND // 2)
    except (TypeError, KeyError):
        return True


def _caught_up(client, user_id: str, field_name: str):
    """``feed.serving_index`` of the field, waiting for a build on its thread."""
    for _attempt in range(3):
        try:
            return feed.serving_index(client, user_id, field_name)
        except feed.NotReady:
            thread = feed.entry(user_id, field_name).thread
            if thread is not None:
                thread.join(BUILD_WAIT_SECONDS)
    raise feed.NotReady(user_id)


def refresh_namespace(client, user_id: str) -> tuple[bool, int]:
    """Refresh the namespace's stale snapshots (see the module docstring): ``(large,
    saved)``, whether it holds more than ``SYNC_BUILD_DOCS`` documents in some field and
    how many fields' snapshots it made current. Raises ``redis.RedisError``,
    ``feed.Unsupported``, ``feed.NotReady`` (a build that did not end in time)."""
    large, saved = False, 0
    for field_name in index_fields.ANALYZERS:
        head = feed.feed_reply(client, user_id, field_name, "0-0", 0)
        if head["N"] <= feed.SYNC_BUILD_DOCS or head["format"] not in feed.FORMATS:
            continue  # small, or a new namespace no recall has settled yet (index_lost)
        large = True
        if not stale(client, user_id, field_name, head):
            continue
        # Read before the index is caught up: a purge after it makes the save refused.
        purge_count = snapshot.purges(client, user_id)
        served, index = _caught_up(client, user_id, field_name)
        try:
            if stale(client, user_id, field_name):  # a build on feed's thread saved one
                snapshot.save(client, user_id, field_name, index, gen=served.gen,
                              format=served.format, last_id=served.last_id,
                              added=served.added, purge_count=purge_count)
        finally:
            served.lock.release()
        saved += not stale(client, user_id, field_name)
    return large, saved


def refresh_all(user_ids: list[str] | None = None) -> dict:
    """Refresh the stale snapshots of ``user_ids`` (default: every namespace Redis knows,
    ``<prefix>:namespaces``): ``{"namespaces": large ones, "saved": fields, "failed":
    namespaces}``. A namespace that fails is logged and counted, never raised."""
    client = store.get_client()
    out = {"namespaces": 0, "saved": 0, "failed": 0}
    if user_ids is None:
        try:
            user_ids = sorted(store.text(n) for n in
                              client.sscan_iter(store.global_key("namespaces"), count=1000))
        except store.RedisError as exc:
            log.warning("serving index snapshots not refreshed: %r", exc)
            return {**out, "failed": 1}
    for user_id in user_ids:
        try:
            large, saved = refresh_namespace(client, user_id)
        except (store.RedisError, feed.Unsupported, feed.NotReady) as exc:
            log.warning("serving index snapshots of %s not refreshed: %r", user_id, exc)
            out["failed"] += 1
            continue
        out["namespaces"] += large
        out["saved"] += saved
    return out
