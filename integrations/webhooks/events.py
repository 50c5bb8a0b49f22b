"""Webhook event types and the JSON each carries (the shape receivers see).

Every delivery's body is::

    {"id": "evt_<24 hex>", "type": "memory.created", "created_at": "<ISO 8601>",
     "namespace": "<user_id or null>", "data": {...}}

``id`` is the same on every attempt of one event to one endpoint, so a receiver dedups
at-least-once deliveries by it. ``data`` per type:

- ``memory.*``: ``{"memory": {memory_id, user_id, conversation_id, type, content, tags,
  importance, metadata, version, created_at, updated_at, deleted_at}, "reason", "actor"}``;
  ``memory.purged`` carries only ``memory_id``, ``user_id`` and ``conversation_id`` (a purge
  keeps no content anywhere).
- ``session.folded``: ``{"session": {session_id, user_id, agent_id, summary, folded}}``.
- ``job.finished``: ``{"job": {job_id, func, status, result, error}}``.
- ``webhook.test``: ``{"message"}``, sent by the "Send test event" button.
"""

from __future__ import annotations

from typing import Any

MEMORY_EVENTS = ("memory.created", "memory.updated", "memory.forgotten", "memory.restored",
                 "memory.rolled_back", "memory.purged", "memory.superseded",
                 "memory.invalidated", "memory.revalidated")
EVENT_TYPES = (*MEMORY_EVENTS, "session.folded", "job.finished")
TEST_EVENT = "webhook.test"

# Memory fields that hold what was remembered; a purge scrubs them from the outbox.
CONTENT_FIELDS = ("content", "tags", "metadata", "context", "keywords")


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def memory_data(memory: Any, *, actor: Any = None, reason: str = "") -> dict:
    """``data`` of a memory event, from a Memory row."""
    return {
        "memory": {
            "memory_id": memory.memory_id, "user_id": memory.user_id,
            "conversation_id": memory.conversation_id, "type": memory.type,
            "content": memory.content, "tags": list(memory.tags or []),
            "importance": memory.importance, "metadata": memory.metadata or {},
            "version": memory.version, "created_at": _iso(memory.created_at),
            "updated_at": _iso(memory.updated_at), "deleted_at": _iso(memory.deleted_at),
            "valid_from": _iso(memory.valid_from), "valid_until": _iso(memory.valid_until),
            "superseded_by": memory.superseded_by, "author": memory.author,
            "agent_id": memory.agent_id, "run_id": memory.run_id,
        },
        "reason": reason or "",
        "actor": getattr(actor, "username", None) or (str(actor) if actor else None),
    }


def purged_data(*, memory_id: str, user_id: str, conversation_id: str | None,
                actor: Any = None, reason: str = "") -> dict:
    return {"memory": {"memory_id": memory_id, "user_id": user_id,
                       "conversation_id": conversation_id},
            "reason": reason or "",
            "actor": getattr(actor, "username", None) or (str(actor) if actor else None)}


def scrub(payload: dict) -> dict:
    """``payload`` without the memory's content (what a purge leaves of an old event)."""
    memory = dict(payload.get("memory") or {})
    for field in CONTENT_FIELDS:
        memory.pop(field, None)
    return {**payload, "memory": {**memory, "purged": True}, "reason": ""}
