"""The audit feed: every memory change (from its version history) and every admin action
(AuditEvent), merged newest first. Reads only; ``as_dict`` (the API) never returns memory
content; the console shows ``snippet`` (the version's text, shortened) beside the id."""

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q

from memories.models import AuditEvent, ChangeKind, Memory

SNIPPET = 100  # characters of a version's content shown beside its id

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
    snippet: str = ""

    @property
    def key(self) -> tuple[dt.datetime, int, int]:
        """The event's place, newest first: time, then source, then row id (unique)."""
        return self.at, self.source, self.row_id

    def as_dict(self) -> dict:
        return {"at": self.at.isoformat(), "actor": self.actor, "action": self.action,
                "target": self.target, "reason": self.reason}


def audit_feed(*, actor: str = "", action: str = "", target: str = "", namespace: str = "",
               since: dt.datetime | None = None, limit: int = 100,
               after: tuple[dt.datetime, int, int] | None = None) -> list[FeedEvent]:
    """Newest first, at most ``limit``; filters are exact matches (``target`` a memory id,
    ``user:<name>`` or ``*``); ``since`` is inclusive. ``after`` is the ``key`` of the last
    event of the previous page: only older events come (keyset paging). ``namespace`` (a
    user id) keeps its memories' versions and the admin events about it.

    Each action is listed once: an AuditEvent that repeats a memory version of the same kind
    (a rollback writes both) is left out; the version row (with its text) stays."""
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
    if namespace:
        history = history.filter(user_id=namespace)
        events = events.filter(Q(data__user_id=namespace) | Q(target=f"user:{namespace}")
                               | Q(target=namespace))
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
                      h.history_change_reason or "", HISTORY, h.history_id, snippet(h.content))
            for h in history.order_by("-history_date", "-history_id")
            .only("history_date", "changed_by", "kind", "memory_id", "history_change_reason",
                  "history_id", "content")[:limit]]
    versions, kinds = {(r.action, r.target) for r in rows}, set(ChangeKind.values)
    rows += [FeedEvent(e.at, e.actor, e.action, e.target, e.reason, ADMIN, e.id)
             for e in events.order_by("-at", "-id")[:limit]
             if not (e.action in kinds and (e.action, e.target) in versions)]
    rows.sort(key=lambda e: e.key, reverse=True)
    return rows[:limit]


def snippet(content: str) -> str:
    """The text on one line, at most ``SNIPPET`` characters."""
    text = " ".join((content or "").split())
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
