"""/audit: the audit trail."""

from ninja import Router

from accounts.roles import require_role
from api.core import require_every_agent, require_namespace
from api.operation_schemas import AuditPageOut
from api.pagination import MAX_LIMIT, clean_limit, decode_cursor, encode_cursor
from api.schemas import READ, errors, page_limit
from memories.audit import audit_feed
from memories.cursors import TIME
from memories.validation import (
    parse_iso_datetime,
)

router = Router()


@router.get("/audit", response={200: AuditPageOut, **errors(*READ)}, tags=["audit"])
def audit(request, actor: str = "", action: str = "", target: str = "", since: str = "",
          limit: int = page_limit(100, MAX_LIMIT), cursor: str | None = None):
    """Every change and admin action, newest first: ``{"events": [{"at", "actor", "action",
    "target", "reason"}], "next_cursor"}`` (``limit`` 1..1000, default 100)."""
    require_role(request.user, "viewer")
    require_namespace(request, None)
    require_every_agent(request, "the audit trail")
    when = None
    if since:
        when = parse_iso_datetime(since, "since")
    limit = clean_limit(limit, default=100)
    after = None
    if cursor:
        after = tuple(decode_cursor(cursor, (TIME, int, int)))
    events = audit_feed(actor=actor, action=action, target=target, since=when,
                        limit=limit + 1, after=after)
    more = len(events) > limit
    events = events[:limit]
    last = events[-1] if more else None
    return {"events": [e.as_dict() for e in events],
            "next_cursor": encode_cursor([last.at.isoformat(), last.source, last.row_id])
            if last else None}
