"""The audit feed: every memory change (from its version history) and every admin action
(AuditEvent), merged newest first. Reads only; never returns memory content."""

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q

from memories.models import AuditEvent, Memory

# Which table an event comes from; part of its place in the feed (``FeedEvent.key``).
HISTORY, ADMIN = 1, 0


@dataclass(frozen=True)
class FeedEvent:
    at: dt.datetime
    actor: str
    action: str
    target: str
    reason: str
    source: int = ADMIN
    row_id: int = 0

    @property
    def key(self) -> tuple[dt.datetime, int, int]:
        """The event's place, newest first: time, then source, then row id (unique)."""
        return self.at, self.source, self.row_id

    def as_dict(self) -> dict:
        return {"at": self.at.isoformat(), "actor": self.actor, "action": self.action,
                "target": self.target, "reason": self.reason}


def audit_feed(*, actor: str = "", action: str = "", target: str = "",
               since: dt.datetime | None = None, limit: int = 100,
               after: tuple[dt.datetime, int, int] | None = None) -> list[FeedEvent]:
    """Newest first, at most ``limit``; filters are exact matches (``target`` a memory id,
    ``user:<name>`` or ``*``); ``since`` is inclusive. ``after`` is the ``key`` of the last
    event of the previous page: only older events come (keyset paging)."""
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
    if after:
        at, source, row_id = after
        history = history.filter(Q(history_date__lt=at) | Q(
            history_date=at, history_id__lt=row_id) if source == HISTORY else Q(
            history_date__lt=at))
        events = events.filter(Q(at__lt=at) | (Q(at=at) if source == HISTORY else Q(
            at=at, id__lt=row_id)))
    rows = [FeedEvent(h.history_date, h.changed_by or "system", h.kind, h.memory_id,
                      h.history_change_reason or "", HISTORY, h.history_id)
            for h in history.order_by("-history_date", "-history_id")
            .only("history_date", "changed_by", "kind", "memory_id", "history_change_reason",
                  "history_id")[:limit]]
    rows += [FeedEvent(e.at, e.actor, e.action, e.target, e.reason, ADMIN, e.id)
             for e in events.order_by("-at", "-id")[:limit]]
    rows.sort(key=lambda e: e.key, reverse=True)
    return rows[:limit]
