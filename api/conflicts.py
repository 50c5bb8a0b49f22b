"""/conflicts: the review queue of proposed supersessions (``memories.services.conflicts``).

Editors and admins accept or reject; viewers read; a namespace-restricted token sees and
decides its own namespaces' proposals only.
"""

from ninja import Router

from accounts.roles import require_role
from api.core import (
    ReasonIn,
    iso_or_none,
    require_every_agent,
    require_namespace,
)
from api.lookups import conflict_or_404
from api.operation_schemas import ConflictOut, ConflictPageOut
from api.pagination import MAX_LIMIT, cursor_page
from api.schemas import ONE, READ, WRITE, ConflictStatusName, errors, page_limit
from memories import services
from memories.errors import InvalidInput
from memories.models import Conflict, ConflictStatus
from memories.validation import clean_identifier

router = Router()


def conflict_out(c: Conflict) -> dict:
    """``{"id", "user_id", "newer", "older", "confidence", "reason", "evidence", "status",
    "created_at", "decided_at", "decided_by", "decision_reason"}`` (``newer`` and ``older``
    are memory ids; confidence 0..1)."""
    return {"id": c.pk, "user_id": c.user_id, "newer": c.newer_id, "older": c.older_id,
            "confidence": c.confidence, "reason": c.reason, "evidence": c.evidence,
            "status": c.status, "created_at": iso_or_none(c.created_at),
            "decided_at": iso_or_none(c.decided_at), "decided_by": c.decided_by,
            "decision_reason": c.decision_reason}


@router.get("/conflicts", response={200: ConflictPageOut, **errors(*READ)}, tags=["conflicts"])
def list_conflicts(request, user_id: str | None = None, status: ConflictStatusName = "open",
                   cursor: str | None = None, limit: int = page_limit(100, MAX_LIMIT)):
    """Proposed supersessions, newest first: ``{"conflicts": [...], "next_cursor"}``.
    ``status``: open (default), accepted or rejected; without ``user_id``, every namespace
    the token reaches."""
    return conflict_page(request, user_id=user_id, status=status, cursor=cursor, limit=limit)


def conflict_page(request, *, user_id: str | None = None, status: str = "open",
                  cursor: str | None = None, limit: int | None = None) -> dict:
    """The list's answer for ``request`` (a request or an MCP caller: ``user`` and
    ``token_namespaces``), role and namespace checked."""
    require_role(request.user, "viewer")
    require_every_agent(request, "the review queue")
    if status not in ConflictStatus.values:
        raise InvalidInput("status must be open, accepted or rejected", field="status")
    rows = Conflict.objects.filter(status=status)
    if user_id is not None:
        user_id = clean_identifier(user_id, "user_id")
        require_namespace(request, user_id)
        rows = rows.filter(user_id=user_id)
    elif getattr(request, "token_namespaces", None):
        rows = rows.filter(user_id__in=request.token_namespaces)
    items, next_cursor = cursor_page(rows, order=("-created_at", "-id"), cursor=cursor,
                                     limit=limit)
    return {"conflicts": [conflict_out(c) for c in items], "next_cursor": next_cursor}


@router.get("/conflicts/{conflict_id}", response={200: ConflictOut, **errors(*ONE)},
            tags=["conflicts"])
def get_conflict(request, conflict_id: int):
    require_role(request.user, "viewer")
    return conflict_out(conflict_or_404(request, conflict_id))


@router.post("/conflicts/{conflict_id}/accept",
             response={200: ConflictOut, **errors(*WRITE, 404, 409)}, tags=["conflicts"])
def accept_conflict(request, conflict_id: int, payload: ReasonIn | None = None):
    """Supersede ``older`` by ``newer``: 200 with the conflict (409: a cycle)."""
    require_role(request.user, "editor")
    conflict_or_404(request, conflict_id)
    c = services.conflict_accept(conflict_id=conflict_id, actor=request.user,
                                 reason=payload.reason if payload else "")
    return conflict_out(c)


@router.post("/conflicts/{conflict_id}/reject",
             response={200: ConflictOut, **errors(*WRITE, 404, 409)}, tags=["conflicts"])
def reject_conflict(request, conflict_id: int, payload: ReasonIn | None = None):
    """Both hold; the pair is not proposed again (an accepted one is undone): 200."""
    require_role(request.user, "editor")
    conflict_or_404(request, conflict_id)
    c = services.conflict_reject(conflict_id=conflict_id, actor=request.user,
                                 reason=payload.reason if payload else "")
    return conflict_out(c)
