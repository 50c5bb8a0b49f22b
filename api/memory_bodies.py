"""What the /memories routes take and answer: the request bodies, the memory's API shape
(:func:`memory_out`), and a write's answer, which says when the memory's Redis mirror failed
(``warning: index_pending`` in the body, ``X-Warning`` on the response).

Other adapters (sessions, the batch create, MCP) answer memories in the same shape from here.
"""

from pydantic import Field

from api.core import Strict, api, iso_or_none
from api.schemas import MemoryTypeName, Supersession
from integrations.metrics.registry import count_redis_error
from memories import timeline
from memories.models import Memory


class MemoryIn(Strict):
    user_id: str
    content: str
    conversation_id: str | None = None
    type: MemoryTypeName = "long_term"
    importance: float | None = None
    tags: list[str] | None = None
    metadata: dict | None = None
    source: str = ""
    author: str = ""
    # The agent scope: the agent writing it and its run (identifiers as user_id; set on
    # create only). A token restricted to agents must name one of them.
    agent_id: str | None = None
    run_id: str | None = None
    keywords: list[str] | None = None
    ttl_seconds: int | None = None
    created_at: str | None = None
    # Absent: a memory in a conversation gets its neighbouring turns, built by the server.
    context: str | None = None
    # Facts over time: ids of memories this one makes no longer true (same namespace), when
    # its fact began to hold (ISO 8601; default: created_at), and what to do with the
    # supersessions the server finds (off | propose | apply; default MEMORY_SUPERSESSION).
    supersedes: list[str] | None = Field(default=None, max_length=50)
    valid_from: str | None = None
    supersession: Supersession | None = None
    # A transcript ("Speaker: text" lines) or a note: write the memories extracted from it
    # (sessions.extract) instead of the text itself; the answer lists them.
    infer: bool = False


class MemoryPatch(Strict):
    content: str | None = None
    importance: float | None = None
    tags: list[str] | None = None
    type: MemoryTypeName | None = None
    metadata: dict | None = None
    context: str | None = None
    reason: str = Field(default="", max_length=1000)
    version: int | None = None
    supersedes: list[str] | None = Field(default=None, max_length=50)
    valid_from: str | None = None
    supersession: Supersession | None = None


class InvalidateIn(Strict):
    reason: str = Field(min_length=1, max_length=1000)
    # ISO 8601; default: now.
    valid_until: str | None = None


class RevalidateIn(Strict):
    reason: str = Field(min_length=1, max_length=1000)


class RollbackIn(Strict):
    version: int
    reason: str = Field(max_length=1000)


def memory_out(memory: Memory, *, supersedes: list[str] | None = None, **extra) -> dict:
    """The API shape of a memory: every model field, datetimes as ISO 8601; ``supersedes``
    (the memories it superseded: ``memories.timeline.supersedes_of``) is read when not
    given."""
    if supersedes is None:
        supersedes = timeline.supersedes_of([memory.memory_id])[memory.memory_id]
    return {
        "memory_id": memory.memory_id, "user_id": memory.user_id,
        "conversation_id": memory.conversation_id, "type": memory.type,
        "content": memory.content, "context": memory.context,
        "context_from": memory.context_from, "keywords": memory.keywords,
        "tags": memory.tags,
        "importance": memory.importance, "access_count": memory.access_count,
        "accessed_at": iso_or_none(memory.accessed_at), "created_at": iso_or_none(memory.created_at),
        "updated_at": iso_or_none(memory.updated_at), "expire_at": iso_or_none(memory.expire_at),
        "source": memory.source, "author": memory.author, "agent_id": memory.agent_id,
        "run_id": memory.run_id, "metadata": memory.metadata,
        "content_hash": memory.content_hash, "version": memory.version,
        "deleted_at": iso_or_none(memory.deleted_at), "deleted_by": memory.deleted_by,
        "valid_from": iso_or_none(memory.valid_from),
        "valid_until": iso_or_none(memory.valid_until),
        "superseded_by": memory.superseded_by, "supersedes": supersedes, **extra,
    }


def memories_out(memories: list[Memory]) -> list[dict]:
    """:func:`memory_out` of a page of memories, their ``supersedes`` read in one query."""
    links = timeline.supersedes_of([m.memory_id for m in memories])
    return [memory_out(m, supersedes=links[m.memory_id]) for m in memories]


INDEX_PENDING = "index_pending"


def warned_out(memory: Memory, **extra) -> dict:
    """A write that reached the database while Redis was down says so (``sync_memory`` set
    ``needs_resync`` on the instance after the commit)."""
    if memory.needs_resync:
        count_redis_error("mirror")
        extra["warning"] = INDEX_PENDING
    return memory_out(memory, **extra)


def pending_header(response, pending: bool):
    """``X-Warning: index_pending`` on a write whose Redis mirror failed: the only place a
    204 can say it, and the same on every write answer, so clients read one place."""
    if pending:
        response["X-Warning"] = INDEX_PENDING
    return response


def write_answer(request, memory: Memory, status: int = 200, **extra):
    """A write's answer: the memory (with ``warning`` when its mirror failed) and the header."""
    response = api.create_response(request, warned_out(memory, **extra), status=status)
    return pending_header(response, memory.needs_resync)
