"""The audit feed: every memory change (from its version history) and every admin action
(AuditEvent), merged newest first. Reads only; never returns memory content."""

import datetime as dt
from dataclasses import dataclass

from memories.models import AuditEvent, Memory


@dataclass(frozen=True)
class FeedEvent:
    at: dt.datetime
    actor: str
    action: str
    target: str
    reason: str

    def as_dict(self) -> dict:
        return {"at": self.at.isoformat(), "actor": self.actor, "action": self.action,
                "target": self.target, "reason": self.reason}


def audit_feed(*, actor: str = "", action: str = "", target: str = "",
               since: dt.datetime | None = None, limit: int = 100) -> list[FeedEvent]:
    """Newest first, at most ``limit``; filters are exact matches (``target`` a memory id,
    ``user:<name>`` or ``*``); ``since`` is inclusive."""
    history = Memory.history.all()
    events = AuditEvent.objects.all()
    if actor:
        history = history.filter(changed_by=actor)
        events = events.filter(actor=actor)
    if action:
        history = history.filter(kind=action)
        events = events.filter(action=action)
    if target:
        history = history.filter(memory_id=target)
        events = events.filter(target=target)
    if since:
        history = history.filter(history_date__gte=since)
        events = events.filter(at__gte=since)
    rows = [FeedEvent(h.history_date, h.changed_by or "system", h.kind, h.memory_id,
                      h.history_change_reason or "")
            for h in history.order_by("-history_date", "-history_id")
            .only("history_date", "changed_by", "kind", "memory_id", "history_change_reason")[:limit]]
    rows += [FeedEvent(e.at, e.actor, e.action, e.target, e.reason)
             for e in events.order_by("-at", "-id")[:limit]]
    rows.sort(key=lambda e: e.at, reverse=True)
    return rows[:limit]
