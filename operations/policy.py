"""Forgetting policy and consolidation of long-term memories (planned, then applied).

Policy (per namespace): a live long-term memory idle longer than ``idle_days`` (idle = since
its last recall, else its creation) with importance below ``importance_below`` is forgotten
with reason ``policy``; idle ones at or above the bound are offered for consolidation; beyond
``max_long_term`` live long-term memories, the least important (then the longest idle) are
archived. A plan is computed without writing (the dry run), and applying a plan applies
exactly that plan.

A run's audit event (``cleanup``) names the run (``run_id``: the job id) and every memory it
forgot and archived, so :func:`operations.cleanup_undo.cleanup_undo` can bring them all back
in one action. Consolidation lives in :mod:`operations.consolidate`.
"""

import datetime as dt
import uuid
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories import access, services
from memories.models import ChangeKind, Memory, MemoryType


@dataclass
class CleanupPlan:
    user_id: str
    forget: list[str] = field(default_factory=list)
    consolidate: list[str] = field(default_factory=list)
    archive: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _live_long_term(user_id: str):
    return Memory.objects.filter(user_id=user_id, type=MemoryType.LONG_TERM,
                                 deleted_at__isnull=True)


def cleanup_plan(*, user_id: str, idle_days: float | None = None,
                 importance_below: float | None = None, max_long_term: int | None = None,
                 now: dt.datetime | None = None) -> CleanupPlan:
    """What the policy would do now (defaults from MEMORY_POLICY_* settings). Writes nothing
    but the namespace's pending recall hits, folded first so idle times are exact."""
    access.access_fold_quietly(user_ids=[user_id])
    now = now or timezone.now()
    idle_days = settings.MEMORY_POLICY_IDLE_DAYS if idle_days is None else idle_days
    bound = settings.MEMORY_POLICY_IMPORTANCE_BELOW if importance_below is None else importance_below
    cap = settings.MEMORY_POLICY_MAX_LONG_TERM if max_long_term is None else max_long_term
    cutoff = now - dt.timedelta(days=idle_days)
    rows = _live_long_term(user_id)
    idle = rows.filter(Q(accessed_at__lt=cutoff) | Q(accessed_at__isnull=True, created_at__lt=cutoff))
    plan = CleanupPlan(user_id=user_id)
    plan.forget = sorted(idle.filter(importance__lt=bound).values_list("memory_id", flat=True))
    plan.consolidate = sorted(idle.filter(importance__gte=bound).values_list("memory_id", flat=True))
    kept = rows.exclude(memory_id__in=plan.forget).order_by(
        "-importance", "-accessed_at", "-created_at", "memory_id")
    plan.archive = list(kept.values_list("memory_id", flat=True)[cap:]) if cap >= 0 else []
    return plan


@transaction.atomic
def cleanup_apply(plan: CleanupPlan, *, actor=None, run_id: str = "") -> dict:
    """Apply a plan: forget (reason ``policy``) and archive (kind ``archive``). The audit
    event keeps ``run_id`` (the job id; a fresh ``run_`` id when none is given) and the ids,
    what an undo of the run restores. Returns the counts and ``run_id``."""
    run_id = run_id or f"run_{uuid.uuid4().hex[:12]}"
    for memory_id in plan.forget:
        services.memory_forget(memory_id=memory_id, actor=actor, reason="policy")
    for memory_id in plan.archive:
        services.memory_forget(memory_id=memory_id, actor=actor, reason="archived",
                               kind=ChangeKind.ARCHIVE)
    services.audit_record(actor=actor, action="cleanup", target=plan.user_id,
                          data={"run_id": run_id, "forgotten": len(plan.forget),
                                "archived": len(plan.archive), "forgotten_ids": plan.forget,
                                "archived_ids": plan.archive})
    return {"run_id": run_id, "forgotten": len(plan.forget), "archived": len(plan.archive),
            "offered_for_consolidation": len(plan.consolidate)}
