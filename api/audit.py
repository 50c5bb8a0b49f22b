"""/audit: the audit trail."""

from ninja import Router

from accounts.roles import require_role
from api.core import require_namespace
from memories.audit import audit_feed
from memories.errors import InvalidInput
from memories.validation import (
    parse_iso_datetime,
)

router = Router()


@router.get("/audit", response=dict, tags=["audit"])
def audit(request, actor: str = "", action: str = "", target: str = "", since: str = "",
          limit: int = 100):
    """Every change and admin action, newest first: ``{"events": [{"at", "actor", "action",
    "target", "reason"}]}``."""
    require_role(request.user, "viewer")
    require_namespace(request, None)
    when = None
    if since:
        when = parse_iso_datetime(since, "since")
    if not 1 <= limit <= 1000:
        raise InvalidInput("limit must be 1..1000", field="limit")
    events = audit_feed(actor=actor, action=action, target=target, since=when, limit=limit)
    return {"events": [e.as_dict() for e in events]}

