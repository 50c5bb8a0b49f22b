"""Judgments: a reviewer's graded relevance (0-3) of a memory for a query; writer and readers."""

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Avg

from accounts.roles import require_role
from lab.evaluation import clean_query
from lab.models import Judgment
from memories.errors import InvalidInput, NotFound
from memories.history import actor_name
from memories.models import Memory
from memories.validation import MEMORY_ID_RE, clean_identifier


@transaction.atomic
def judgment_set(*, actor, user_id, query, memory_id, grade) -> tuple[Judgment, bool]:
    """Record ``actor``'s grade (0-3) of a memory for a query; a reviewer's later grade
    replaces their earlier one, other reviewers' grades are kept apart. Returns
    ``(judgment, created)``."""
    require_role(actor, "editor")
    user_id = clean_identifier(user_id, "user_id")
    query = clean_query(query)
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise InvalidInput("grade must be an integer 0..3", field="grade")
    if (
        not isinstance(memory_id, str)
        or not MEMORY_ID_RE.match(memory_id)
        or not (Memory.objects.filter(memory_id=memory_id, user_id=user_id).exists())
    ):
        raise NotFound(f"memory {memory_id!r} not found in {user_id!r}", field="memory_id")
    judgment, created = Judgment.objects.update_or_create(
        user_id=user_id,
        query=query,
        memory_id=memory_id,
        reviewer=actor_name(actor),
        defaults={"grade": grade},
    )
    return judgment, created


def judgment_grades(
    *, user_id: str, query: str, reviewer: str = "", memory_ids: Iterable[str] | None = None
) -> dict[str, float]:
    """``{memory_id: grade}`` for a query: one reviewer's grades, or (blank ``reviewer``)
    the mean of every reviewer's grade of that memory."""
    rows = Judgment.objects.filter(user_id=user_id, query=" ".join(query.split()))
    if reviewer:
        rows = rows.filter(reviewer=reviewer)
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=list(memory_ids))
    return {
        r["memory_id"]: float(r["grade"])
        for r in rows.values("memory_id").annotate(grade=Avg("grade")).order_by()
    }


def judgment_table(
    *, user_id: str, query: str, memory_ids: Iterable[str] | None = None
) -> dict[str, dict[str, int]]:
    """``{memory_id: {reviewer: grade}}``: every reviewer's grades, kept apart."""
    rows = Judgment.objects.filter(user_id=user_id, query=" ".join(query.split()))
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=list(memory_ids))
    out: dict[str, dict[str, int]] = {}
    for memory_id, reviewer, grade in rows.values_list("memory_id", "reviewer", "grade"):
        out.setdefault(memory_id, {})[reviewer] = grade
    return out




def judgment_gains(*, user_id: str, query: str) -> dict[str, float]:
    """``{memory_id: mean grade}`` of a query's judged memories that are still live: the
    gains an evaluation run uses (forgotten or purged memories are left out, so they never
    count in the ideal ranking). One query (the live check is a subquery)."""
    live = Memory.objects.filter(user_id=user_id, deleted_at__isnull=True).values("memory_id")
    rows = Judgment.objects.filter(
        user_id=user_id, query=" ".join(query.split()), memory_id__in=live
    )
    return {
        r["memory_id"]: float(r["grade"])
        for r in rows.values("memory_id").annotate(grade=Avg("grade")).order_by()
    }
