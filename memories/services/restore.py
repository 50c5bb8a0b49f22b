"""A replace import's rows, written here: the restored memories with their history."""

from simple_history.utils import bulk_create_with_history

from memories.history import actor_name
from memories.models import ChangeKind, Memory


def memories_insert_restored(*, memories: list[Memory], versions: dict[str, list],
                             actor) -> None:
    """Insert ``memories`` (unsaved instances, ids and contexts set) with their history.

    ``versions`` maps a memory id to the document's history rows of that memory (unsaved
    instances of ``Memory.history.model``, oldest first), inserted as they are; a memory
    without any gets one version of kind ``restore`` attributed to ``actor``. Sends no
    signal and mirrors nothing: the import reindexes the namespaces after the commit.
    """
    bulk_create_with_history([m for m in memories if m.memory_id not in versions], Memory,
                             batch_size=500, default_change_reason="restore",
                             custom_historical_attrs={"kind": ChangeKind.RESTORE,
                                                      "changed_by": actor_name(actor)})
    Memory.objects.bulk_create([m for m in memories if m.memory_id in versions],
                               batch_size=500)
    Memory.history.model.objects.bulk_create(
        [row for rows in versions.values() for row in rows], batch_size=500)
