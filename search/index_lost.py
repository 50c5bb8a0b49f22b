"""A recall must not answer "nothing" because Redis lost the namespace's index.

Redis restarted without persistence (or flushed) holds no key of a namespace whose
memories the database still has: every recall would find no document and answer an empty
list, as if nothing were remembered. The ``ver`` hash (the last version put per memory) is
written by every put, a removal included, and only a lost Redis or a restore's reindex
drops it; so a search that found no document in a namespace without ``ver`` asks the
database whether it holds live memories. If it does, a rebuild of the namespace is queued
(``search.serving.feed.request_rebuild``: once) and the recall answers 503
``index_rebuilding``; the
worker's reconcile restores every namespace too (``operations.jobs.periodic_ensure`` runs it
at once when Redis lost the schedule).

Namespaces that are empty, or whose memories have no searchable terms, keep answering an
empty list: their ``ver`` exists, or the database holds nothing live.

A write that lands after the loss and before the rebuild makes the index partial: its
``ver`` exists again and a search finds documents, only not the older ones. So a write that
finds no ``ver`` stamps the namespace ``new:<format>`` (``put.lua``), which no reader
serves, and the first recall settles it (:func:`settle_new`): when the oldest memories the
database holds live are in ``ver``, the namespace really is new and the stamp becomes the
plain format; when one is missing, Redis lost it and the recall answers 503 as above.
"""


from django.db.models import Q
from django.utils import timezone
from redis.exceptions import OutOfMemoryError

from memories import store
from memories.errors import IndexRebuilding
from memories.models import Memory
from search.serving import feed

RETRY_AFTER_SECONDS = 5


# The oldest live memories a recall looks up in ``ver`` to settle a ``new:`` stamp: Redis
# loses a namespace whole, so its oldest memories are missing when anything is.
SETTLE_SAMPLE = 20


def _live_rows(user_id: str):
    return (Memory.objects.filter(user_id=user_id, deleted_at__isnull=True, index_error="")
            .filter(Q(expire_at__isnull=True) | Q(expire_at__gt=timezone.now())))


def _raise_rebuilding(client, user_id: str) -> None:
    feed.request_rebuild(client, user_id, "was lost by Redis")
    raise IndexRebuilding(
        f"the index of namespace {user_id!r} was lost by Redis and is being rebuilt from "
        "the database; try again shortly", field="user_id",
        retry_after_seconds=RETRY_AFTER_SECONDS)


def is_new_stamp(stamp: str | None) -> bool:
    """True for the stamp of a namespace whose index a write started (``put.lua``)."""
    return bool(stamp) and stamp.startswith(feed.NEW_STAMP)


def settle_new(client, user_id: str, stamp: str) -> None:
    """Settle the ``new:<format>`` stamp of ``user_id``: the plain format when the database's
    oldest live memories (``SETTLE_SAMPLE``, mirrored without error) are all in ``ver``;
    otherwise queue the rebuild and raise IndexRebuilding. Raises RedisError."""
    oldest = list(_live_rows(user_id).filter(needs_resync=False)
                  .order_by("pk").values_list("memory_id", flat=True)[:SETTLE_SAMPLE])
    held = client.hmget(store.key(user_id, "ver"), oldest) if oldest else []
    if any(version is None for version in held):
        _raise_rebuilding(client, user_id)
    # Only this stamp is replaced: a rebuild that swapped in meanwhile wrote its own. A
    # Redis that refuses writes (full) keeps it: the namespace is whole, so this process
    # serves it meanwhile, and a process that has not checked it checks again.
    try:
        client.eval(_SETTLE, 1, store.key(user_id, "format"), stamp,
                    stamp.removeprefix(feed.NEW_STAMP))
    except OutOfMemoryError:
        feed.settled_whole(user_id, stamp)


def settled_first(client, user_id: str, call):
    """``call()`` (a read of the namespace's serving index), and once more after settling
    the ``new:`` stamp it was refused for (:func:`settle_new`). Raises what ``call`` raises
    (``feed.Unsupported`` for any other format it does not read, or for a stamp still new
    on the second call), IndexRebuilding when Redis lost the namespace, RedisError."""
    try:
        return call()
    except feed.Unsupported as exc:
        if not is_new_stamp(exc.args[0]):
            raise
        settle_new(client, user_id, exc.args[0])
    return call()


_SETTLE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) end
return 0
"""


def refuse_if_lost(client, user_id: str) -> None:
    """Raise IndexRebuilding when Redis holds nothing of ``user_id`` while the database has
    live memories there (and queue the rebuild); return otherwise. Call it only after a
    search found no document (one EXISTS, and a query only when that finds nothing).
    Raises RedisError."""
    if client.exists(store.key(user_id, "ver")) or not _live_rows(user_id).exists():
        return
    _raise_rebuilding(client, user_id)
