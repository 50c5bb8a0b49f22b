"""What a purge scrubs from the recall log beyond the purged memory's own rows.

A result row of a purged memory, and the feedback on it, go with the memory (foreign keys,
``recalls.models``). What stays would still say what the memory said: the question of every
recall that answered it (an agent asking "ZEBRA-4471 PIN?" names the secret), that
question's words in the recall's time range and in its other results' matched terms, and
the copy of the question in the feedback on those recalls. :func:`recall_log_erase` clears
them, inside the purge's transaction; the trace stays (who recalled when, the other
results), as a redacted trace does.
"""

import logging

from memories import store
from recalls.log import CHUNK, recall_log_flush
from recalls.models import Recall, RecallFeedback, RecallResult

log = logging.getLogger(__name__)

QUESTION_KEYS = ("terms", "context_terms")


def recall_log_erase(sender, *, memory_ids: list[str], **kwargs) -> int:
    """Receiver of ``memories.services.purge.memories_erasing``: clear the question of every
    trace that answered one of ``memory_ids``. Buffered traces are written first, so none
    escapes; with Redis unreachable they stay buffered and are written later without the
    purged results, their question kept (logged). Returns how many traces were cleared."""
    try:
        recall_log_flush()
    except store.RedisError as exc:
        log.warning("recall log not written before a purge: %s", type(exc).__name__)
    keys = sorted(set(RecallResult.objects.filter(memory_id__in=memory_ids)
                      .values_list("recall_id", flat=True)))
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start:start + CHUNK]
        Recall.objects.filter(recall_id__in=chunk).update(query="", time_range=None)
        RecallFeedback.objects.filter(recall_key__in=chunk).update(query="")
        results = [r for r in RecallResult.objects.filter(recall_id__in=chunk)
                   if any(k in r.explain for k in QUESTION_KEYS)]
        for r in results:
            r.explain = {k: v for k, v in r.explain.items() if k not in QUESTION_KEYS}
        RecallResult.objects.bulk_update(results, ["explain"], batch_size=CHUNK)
    return len(keys)
