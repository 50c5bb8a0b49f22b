"""Writer of access counts: folds a batch of recall hits into ``Memory.access_count``."""

import datetime as dt

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memories.models import AccessFold, Memory


def memory_access_apply(*, batch_id: str, user_id: str,
                        hits: dict[str, tuple[int, dt.datetime]]) -> int:
    """Add one batch of recall hits (``{memory_id: (hits, last hit time)}``, see
    ``memories.access``) to ``access_count``/``accessed_at``, exactly once per ``batch_id``.

    No new version and no ``updated_at`` change; ids without a row (purged) are skipped.
    Returns the hits applied: 0 when this batch was applied before.
    """
    # One prepared UPDATE run per memory: an ORM update() cannot add a different count and
    # time to each row except through a CASE over the whole batch, which SQLite evaluates
    # per row while it holds the write lock (folds then stalled every other write).
    qn = connection.ops.quote_name
    # accessed_at only moves forward: batches may be applied out of order (one left by a
    # crash, two folders at once).
    count, at = qn("access_count"), qn("accessed_at")
    sql = (f"UPDATE {qn(Memory._meta.db_table)} SET {count} = {count} + %s, {at} = CASE "
           f"WHEN {at} IS NULL OR {at} < %s THEN %s ELSE {at} END WHERE {qn('memory_id')} = %s")
    rows = []
    for memory_id, (n, last_hit) in sorted(hits.items()):
        last_hit = connection.ops.adapt_datetimefield_value(last_hit)
        rows.append((n, last_hit, last_hit, memory_id))
    total = sum(n for n, _ in hits.values())
    try:
        with transaction.atomic():
            AccessFold.objects.create(batch_id=batch_id, user_id=user_id, hits=total)
            with connection.cursor() as cursor:
                cursor.executemany(sql, rows)
    except IntegrityError:
        return 0
    return total


def access_folds_prune(*, older_than: dt.timedelta = dt.timedelta(days=1)) -> int:
    """Delete ``AccessFold`` records older than ``older_than``; returns how many. A batch
    is deleted from Redis right after its record is written, so a day-old record guards
    nothing any more."""
    deleted, _ = AccessFold.objects.filter(folded_at__lt=timezone.now() - older_than).delete()
    return deleted

