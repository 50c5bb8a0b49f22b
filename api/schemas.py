"""The typed shapes of the API's answers, shared by every router (and ``lab.api`` and the
webhooks' router): the one error envelope, the memory, its page, and the small helpers that
declare an operation's errors.

Answers are still built as dicts by the views (``api.memory_bodies.memory_out`` and the like, which
MCP answers too); these schemas declare them in ``/api/v1/openapi.json`` and, where ninja
validates a view's return value, check it. An ``Out`` keeps a key it does not declare (it
never drops a field a view returns), and the document does not announce extra keys, so a
generated client gets closed types; ``tests/test_openapi.py`` checks real answers hold no
undeclared key.
"""

from typing import Annotated, Any, Literal

from ninja import Query, Schema
from pydantic import ConfigDict, Field


def _closed(schema: dict) -> None:
    schema.pop("additionalProperties", None)


class Out(Schema):
    """An answer's object: every key it declares, none dropped at runtime."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_closed)


# Datetimes are answered as the ISO 8601 text the views write (``isoformat()``), kept as text
# so an answer is byte for byte what it was.
Iso = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
MemoryTypeName = Literal["long_term", "short_term", "working"]
ConflictStatusName = Literal["open", "accepted", "rejected"]
MatchMode = Literal["any", "all", "all_then_any"]
Role = Literal["viewer", "editor", "admin"]


class ErrorDetail(Schema):
    """``code`` (invalid, unauthorized, forbidden, not_found, conflict, too_large, busy,
    unavailable, redis_full, index_rebuilding, method_not_allowed), a human ``message`` and
    the request ``field`` it is about (null when none); some errors add keys, e.g.
    ``retry_after_seconds`` (429, 503: also the ``Retry-After`` header) or ``limit``."""

    model_config = ConfigDict(extra="allow")
    code: str
    message: str
    field: str | None = None


class ErrorOut(Schema):
    """The one error envelope of every 4xx and 5xx: ``{"error": {"code", "message",
    "field"}}``."""

    error: ErrorDetail


# The statuses an operation can give, by what it does.
AUTH = (401, 403)  # no or a bad token; a role or namespace the token lacks
READ = (400, *AUTH)
ONE = (*READ, 404)  # an object by its id (also one outside the token's namespaces)
WRITE = (400, *AUTH, 413)  # a body (413: over the upload limit)


def errors(*statuses: int) -> dict[int, type[ErrorOut]]:
    """``{status: ErrorOut}`` for an operation's ``response=``: the error envelope under each
    status it can answer."""
    return {status: ErrorOut for status in sorted(set(statuses))}


def page_limit(default: int, maximum: int) -> Any:
    """A list's ``limit`` query parameter: 1..``maximum`` (``default`` when absent), stated in
    the document and checked by ninja (400 naming ``limit``)."""
    return Query(default, ge=1, le=maximum, description=f"page size, 1..{maximum}")


class MemoryBase(Out):
    """What every memory shape carries (a memory, a recall hit); datetimes ISO 8601."""

    memory_id: str
    conversation_id: str | None
    type: MemoryTypeName
    content: str
    importance: float
    metadata: dict[str, Any]
    created_at: Iso | None
    version: int
    valid_from: Iso | None
    valid_until: Iso | None
    superseded_by: str | None
    author: str
    tags: list[str]
    agent_id: str = Field(description="the agent that wrote it (\"\": none)")
    run_id: str = Field(description="the agent's run it came from (\"\": none)")


class MemoryOut(MemoryBase):
    """One memory: every field, ``supersedes`` the ids of the memories it superseded. Write
    answers add ``deduplicated`` (a create or promote that found the same text in the same
    scope) and ``warning: "index_pending"`` (the database has it, the index will within a
    reconcile)."""

    user_id: str
    context: str
    context_from: str
    keywords: list[str]
    access_count: int
    accessed_at: Iso | None
    updated_at: Iso | None
    expire_at: Iso | None
    source: str
    content_hash: str
    deleted_at: Iso | None
    deleted_by: str
    supersedes: list[str]
    # Present only on write answers (absent, never null, elsewhere: ``exclude_unset``).
    deduplicated: bool = Field(default=None)
    warning: Literal["index_pending"] = Field(default=None)


class MemoriesOut(Out):
    memories: list[MemoryOut]


class MemoryPageOut(MemoriesOut):
    next_cursor: str | None


class JobOut(Out):
    """A background job was queued: poll ``GET /jobs/{job_id}``."""

    job_id: str


Supersession = Literal["off", "propose", "apply"]
ChangeKindName = Literal["create", "edit", "importance", "rollback", "forget", "restore", "purge",
                         "promote", "consolidate", "archive", "supersede", "invalidate",
                         "revalidate"]

METADATA_PATH = r"^metadata\.[A-Za-z_]\w*(\.[A-Za-z_]\w*){0,4}$"
# ``GET /memories``' filters on metadata: ninja cannot declare a parameter whose name varies,
# so the operation states it in its own extension (and its description).
METADATA_FILTER = {"x-query-parameter-patterns": [{
    "pattern": METADATA_PATH, "in": "query", "schema": {"type": "string"},
    "description": "metadata.<path>=value keeps memories whose metadata holds the string "
                   "value at that dotted path (1 to 5 names, each a Python identifier); at "
                   "most 10 such filters, all of them held (400 naming metadata.<path> for a "
                   "bad path, metadata for too many)"}]}


class InferredOut(Out):
    """``infer: true``: the memories extracted from the text, each written as a create
    (``deduplicated`` on each); ``method`` local or llm."""

    memories: list[MemoryOut]
    inferred: Literal[True]
    method: Literal["local", "llm"]


class NamespaceOut(Out):
    user_id: str
    conversation_id: str | None
    memories: int = Field(description="live memories")


class NamespacePageOut(Out):
    namespaces: list[NamespaceOut]
    next_cursor: str | None


class VersionOut(Out):
    version: int
    kind: ChangeKindName
    content: str
    importance: float
    tags: list[str]
    type: MemoryTypeName
    changed_by: str
    reason: str
    at: Iso
    forgotten: bool


class HistoryOut(Out):
    """Every version of a memory, oldest first."""

    versions: list[VersionOut]


class ReadyOut(Out):
    """Whether Redis holds the memory's current version; ``indexed_at`` epoch seconds."""

    ready: bool
    indexed_at: float | None
