"""Undo of a forgetting-policy run: every memory the run forgot or archived comes back, in
one audited action.

A run (``operations.jobs.cleanup_job``; its id is the job id) leaves an audit event
``cleanup`` whose ``data`` names the run (``run_id``) and the memories it forgot
(``forgotten_ids``) and archived (``archived_ids``). :func:`cleanup_undo` restores those that
are still forgotten by that run: a memory purged since, restored since, or forgotten again
later for another reason is left as it is and reported under ``skipped``, so an undo never
overrides a later decision.
"""

from django.db import transaction

from memories import services
from memories.errors import Conflict, InvalidInput, NotFound
from memories.models import AuditEvent, Memory

POLICY_REASONS = ("policy", "archived")  # the reasons cleanup_apply forgets with


def cleanup_run(run_id: str, *, namespaces: list[str] | None = None) -> AuditEvent:
    """The audit event of a policy run (of one of ``namespaces`` when given: a run of
    another is as unknown as one that never was). Raises NotFound naming ``run_id``."""
    events = AuditEvent.objects.filter(action="cleanup", data__run_id=run_id)
    if namespaces is not None:
        events = events.filter(target__in=namespaces)
    event = events.order_by("-at", "-id").first() if run_id else None
    if event is None:
        raise NotFound(f"no forgetting-policy run {run_id!r}", field="run_id")
    return event


def cleanup_runs(*, user_id: str, limit: int = 10) -> list[dict]:
    """The latest policy runs of a namespace, newest first: ``{"run_id", "at", "actor",
    "forgotten", "archived", "undone"}`` (counts; ``undone``: the undo's event or None)."""
    events = list(AuditEvent.objects.filter(action="cleanup", target=user_id,
                                            data__has_key="run_id").order_by("-at", "-id")[:limit])
    undos = {e.target: e for e in AuditEvent.objects.filter(
        action="cleanup_undo", target__in=[e.data["run_id"] for e in events])}
    return [{"run_id": e.data["run_id"], "at": e.at, "actor": e.actor,
             "forgotten": len(e.data.get("forgotten_ids", [])),
             "archived": len(e.data.get("archived_ids", [])),
             "undone": undos.get(e.data["run_id"])} for e in events]


def _still_forgotten_by_policy(memory: Memory) -> bool:
    if memory.deleted_at is None:
        return False
    last = memory.history.order_by("-history_date", "-history_id").first()
    return last is not None and (last.history_change_reason or "") in POLICY_REASONS


@transaction.atomic
def cleanup_undo(*, run_id: str, actor=None, reason: str) -> dict:
    """Restore what policy run ``run_id`` forgot and archived (a new ``restore`` version each,
    with ``reason``) and record one audit event ``cleanup_undo`` (target the run id).
    ``{"run_id", "user_id", "restored": [memory_id], "skipped": [memory_id]}``. Raises
    InvalidInput (no reason), NotFound (no such run), Conflict (already undone)."""
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a reason is required to undo a policy run", field="reason")
    event = cleanup_run(run_id)
    if AuditEvent.objects.filter(action="cleanup_undo", target=run_id).exists():
        raise Conflict(f"policy run {run_id} was undone already", field="run_id")
    ids = list(dict.fromkeys(event.data.get("forgotten_ids", []) +
                             event.data.get("archived_ids", [])))
    rows = {m.memory_id: m for m in Memory.objects.select_for_update().filter(memory_id__in=ids)}
    restored, skipped = [], []
    for memory_id in ids:
        memory = rows.get(memory_id)
        if memory is None or not _still_forgotten_by_policy(memory):
            skipped.append(memory_id)
            continue
        services.memory_restore(memory_id=memory_id, actor=actor, reason=reason)
        restored.append(memory_id)
    services.audit_record(actor=actor, action="cleanup_undo", target=run_id, reason=reason,
                          data={"user_id": event.target, "restored": len(restored),
                                "skipped": skipped})
    return {"run_id": run_id, "user_id": event.target, "restored": restored,
            "skipped": skipped}
