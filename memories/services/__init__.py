"""The only writers of Memory (and its history), AuditEvent and AccessFold. One module per
idea (create, change, access folds, audit); this package names them all, so callers write
``services.memory_create(...)``.

Every public function is keyword-only and runs in one database transaction. The Redis mirror
is brought in line by :func:`memories.mirror.sync_memory` from ``transaction.on_commit``, in
this process, so a memory is searchable when the call returns; if Redis is down the database
write still stands, the row is flagged ``needs_resync`` and ``reconcile`` repairs it.

Writers never import views, jobs or the API; they mirror rows to Redis through
``memories.mirror`` after the commit.
"""

from memories.services.access_fold import access_folds_prune, memory_access_apply
from memories.services.audit import audit_record
from memories.services.change import (
    BULK_ACTIONS,
    consolidation_undo,
    memory_bulk,
    memory_forget,
    memory_promote,
    memory_purge,
    memory_restore,
    memory_rollback,
    memory_update,
)
from memories.services.conflicts import conflict_accept, conflict_reject, conflicts_decide
from memories.services.create import (
    MAX_METADATA_BYTES,
    MAX_TTL_SECONDS,
    content_hash,
    memory_create,
    memory_create_many,
)
from memories.services.marks import memories_mark_resync
from memories.services.purge import memories_erase
from memories.services.restore import memories_insert_restored
from memories.services.validity import memory_invalidate, memory_revalidate

__all__ = [
    "memories_insert_restored",
    "memories_mark_resync",
    "BULK_ACTIONS", "MAX_METADATA_BYTES", "MAX_TTL_SECONDS", "conflict_accept",
    "conflict_reject", "conflicts_decide", "memory_invalidate", "memory_revalidate",
    "access_folds_prune", "audit_record", "consolidation_undo", "content_hash",
    "memories_erase", "memory_access_apply", "memory_bulk", "memory_create", "memory_create_many",
    "memory_forget", "memory_promote", "memory_purge", "memory_restore", "memory_rollback",
    "memory_update",
]
