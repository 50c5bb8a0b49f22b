"""The writer of recall feedback: what an agent or a person said of one recalled memory,
given (:func:`feedback_give`) or restored from an export (:func:`feedback_restore`)."""

from django.db import transaction

from memories.errors import InvalidInput
from memories.models import Memory
from memories.validation import clean_text
from recalls.models import Recall, RecallFeedback

NOTE_MAX = 2000
# ``useful`` as a grade of the lab's 0..3 scale (lab.models.Judgment).
USEFUL_GRADE = {True: 3, False: 0}


def _grade(grade, useful) -> int:
    if (grade is None) == (useful is None):
        raise InvalidInput("give either grade (0..3) or useful (true or false)", field="grade")
    if useful is not None:
        if not isinstance(useful, bool):
            raise InvalidInput("useful must be true or false", field="useful")
        return USEFUL_GRADE[useful]
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise InvalidInput("grade must be an integer from 0 to 3", field="grade")
    return grade


def feedback_give(*, recall: Recall, memory_id: str, actor: str, grade: int | None = None,
                  useful: bool | None = None, note: str = "") -> tuple[RecallFeedback, bool]:
    """Record ``actor``'s feedback on result ``memory_id`` of ``recall``: a ``grade`` 0..3
    or ``useful`` (true: 3, false: 0), and an optional ``note`` (at most ``NOTE_MAX``
    characters). One per actor, result and recall: giving it again replaces it. Returns
    ``(feedback, created)``. Raises InvalidInput naming ``grade``, ``useful``, ``note`` or
    ``memory_id`` (a memory that was not among the recall's results)."""
    value = _grade(grade, useful)
    note = clean_text(note or "", "note")
    if len(note) > NOTE_MAX:
        raise InvalidInput(f"note must be at most {NOTE_MAX} characters", field="note")
    if not recall.results.filter(memory_id=memory_id).exists():
        raise InvalidInput(f"memory {memory_id!r} was not a result of recall "
                           f"{recall.recall_id}", field="memory_id")
    with transaction.atomic():
        return RecallFeedback.objects.update_or_create(
            recall_key=recall.recall_id, memory_id=memory_id, actor=actor,
            defaults={"recall": recall, "user_id": recall.user_id, "query": recall.query,
                      "grade": value, "note": note})


ACTOR_MAX = 150  # RecallFeedback.actor's length: a username


def _restored(item: dict, n: int) -> RecallFeedback:
    """One checked item of :func:`feedback_restore`, unsaved; InvalidInput naming
    ``feedback[n]``."""
    where = f"feedback[{n}]"
    try:
        grade, actor = item.get("grade"), item.get("actor")
        if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
            raise InvalidInput("grade must be an integer from 0 to 3", field="grade")
        if not isinstance(actor, str) or not 0 < len(actor) <= ACTOR_MAX:
            raise InvalidInput("actor must be a user name", field="actor")
        key = item.get("recall_key")
        if not isinstance(key, str) or not 0 < len(key) <= 20:
            raise InvalidInput("recall_key must be a recall's id", field="recall_key")
        query, note = item.get("query") or "", item.get("note") or ""
        if not isinstance(query, str) or not isinstance(note, str):
            raise InvalidInput("query and note must be strings", field="query")
        query, note = clean_text(query, "query"), clean_text(note, "note")
        if len(note) > NOTE_MAX:
            raise InvalidInput(f"note must be at most {NOTE_MAX} characters", field="note")
    except InvalidInput as exc:
        raise InvalidInput(f"{where}.{exc.message}", field="feedback", index=n) from None
    return RecallFeedback(recall_key=key, user_id=item["user_id"], memory_id=item["memory_id"],
                          actor=actor, grade=grade, note=note, query=query)


@transaction.atomic
def feedback_restore(*, user_ids: list[str], items: list[dict]) -> dict:
    """Replace the recall feedback of namespaces ``user_ids`` by ``items`` (an export's:
    ``{"recall_key", "user_id", "query", "memory_id", "actor", "grade", "note",
    "created_at", "updated_at"}``, ``user_id`` one of ``user_ids``, times aware datetimes
    or None). An item whose memory is not in its namespace (not in the document) is skipped
    and counted, never failing the import; a later item for the same recall, memory and
    actor replaces an earlier one. A recall still traced here is linked again. Returns
    ``{"feedback": written, "feedback_skipped": skipped}``. Raises InvalidInput naming
    ``feedback[n]`` (a grade outside 0..3, an actor that is not a name, an over-long note)."""
    RecallFeedback.objects.filter(user_id__in=user_ids).delete()
    chosen: dict[tuple, tuple[RecallFeedback, dict]] = {}
    for n, item in enumerate(items):
        row = _restored(item, n)
        chosen[(row.recall_key, row.memory_id, row.actor)] = (row, item)
    memory_ids = sorted({row.memory_id for row, _ in chosen.values()})
    homes: set[tuple[str, str]] = set()
    traced: set[tuple[str, str]] = set()
    for start in range(0, len(memory_ids), 500):  # SQLite's bound on a statement's parameters
        homes |= set(Memory.objects.filter(memory_id__in=memory_ids[start:start + 500],
                                           user_id__in=user_ids)
                     .values_list("user_id", "memory_id"))
    keys = sorted({row.recall_key for row, _ in chosen.values()})
    for start in range(0, len(keys), 500):
        traced |= set(Recall.objects.filter(recall_id__in=keys[start:start + 500],
                                            user_id__in=user_ids)
                      .values_list("user_id", "recall_id"))
    kept = [(row, item) for row, item in chosen.values() if (row.user_id, row.memory_id) in homes]
    for row, _item in kept:
        row.recall_id = row.recall_key if (row.user_id, row.recall_key) in traced else None
    RecallFeedback.objects.bulk_create([row for row, _ in kept], batch_size=500)
    for row, item in kept:
        times = {k: item[k] for k in ("created_at", "updated_at") if item.get(k)}
        if times:  # auto_now(_add) stamps the create; the export's moments win
            RecallFeedback.objects.filter(recall_key=row.recall_key, memory_id=row.memory_id,
                                          actor=row.actor).update(**times)
    # Skipped: the items whose memory is not here (a replaced duplicate is not counted).
    return {"feedback": len(kept), "feedback_skipped": len(chosen) - len(kept)}
