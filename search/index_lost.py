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
"""

from django.db.models import Q
from django.utils import timezone

from memories import store
from memories.errors import IndexRebuilding
from memories.models import Memory
from search.serving import feed

RETRY_AFTER_SECONDS = 5


def _live_rows_exist(user_id: str) -> bool:
    return (Memory.objects.filter(user_id=user_id, deleted_at__isnull=True, index_error="")
            .filter(Q(expire_at__isnull=True) | Q(expire_at__gt=timezone.now())).exists())


def refuse_if_lost(client, user_id: str) -> None:
    """Raise IndexRebuilding when Redis holds nothing of ``user_id`` while the database has
    live memories there (and queue the rebuild); return otherwise. Call it only after a
    search found no document (one EXISTS, and a query only when that finds nothing).
    Raises RedisError."""
    if client.exists(store.key(user_id, "ver")) or not _live_rows_exist(user_id):
        return
    feed.request_rebuild(client, user_id, "was lost by Redis")
    raise IndexRebuilding(
        f"the index of namespace {user_id!r} was lost by Redis and is being rebuilt from "
        "the database; try again shortly", field="user_id",
        retry_after_seconds=RETRY_AFTER_SECONDS)
