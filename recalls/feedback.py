"""The writer of recall feedback: what an agent or a person said of one recalled memory."""

from django.db import transaction

from memories.errors import InvalidInput
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
