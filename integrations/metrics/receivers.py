"""Count committed memory changes: ``memory_console_memory_writes_total{kind}``.

Every versioned change of a memory but its creation goes through simple_history, whose
``post_create_historical_record`` names the kind the service stamped (edit, forget,
restore, rollback ...); the hard delete of a purge is its ``-`` row. The count is taken when
the transaction commits, so a write that rolls back is not counted. The writers that create
memories insert their first history rows with simple-history's ``bulk_create_with_history``,
which sends no signal: they count on commit in ``memories.services.create`` (one per memory).
Connected by ``connect()`` (the integrations app's ``ready``).
"""

from django.db import transaction
from simple_history.signals import post_create_historical_record

from integrations.metrics.registry import count_write
from memories.models import Memory


def _count(sender, instance, history_instance, **kwargs) -> None:
    if not isinstance(instance, Memory):
        return
    kind = "purge" if history_instance.history_type == "-" else history_instance.kind
    transaction.on_commit(lambda: count_write(kind))


def connect() -> None:
    post_create_historical_record.connect(_count, dispatch_uid="metrics-memory-writes")
