"""Output schemas of the MCP tools: the REST API's shapes, as pydantic models.

Field names are the API's own (``memory_id``, ``user_id``, ``version`` ...). Models accept
fields they do not name (``extra="allow"``), so a field the API adds later reaches MCP
clients too instead of being dropped. Datetimes are ISO 8601 strings, as in the API.
"""

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class MemoryOut(_Open):
    """A memory, as ``GET /api/v1/memories/{id}`` answers it."""

    memory_id: str
    user_id: str
    conversation_id: str | None = None
    type: str
    content: str
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(description="0..1")
    metadata: dict = Field(default_factory=dict)
    author: str = ""
    agent_id: str = Field(default="", description="the agent that wrote it; '' none")
    run_id: str = Field(default="", description="the agent's run it came from; '' none")
    version: int
    created_at: str | None = None
    updated_at: str | None = None
    expire_at: str | None = None
    deleted_at: str | None = None
    valid_from: str | None = Field(default=None, description="when the fact began to hold")
    valid_until: str | None = Field(
        default=None, description="when it stopped holding; null while it holds")
    superseded_by: str | None = Field(
        default=None, description="the memory that made it no longer true, or null")
    supersedes: list[str] = Field(
        default_factory=list, description="the memories this one made no longer true")
    deduplicated: bool | None = Field(
        default=None, description="true when an identical live memory was returned instead")
    warning: str | None = Field(
        default=None, description="'index_pending': stored, searchable after the next repair")


class ExplainSummary(_Open):
    """Why a memory ranked where it did: the score's parts and its strongest terms."""

    bm25: float
    relevance: float = Field(description="BM25 / best BM25 among the candidates, 0..1")
    recency: float = Field(description="0.5 ** (age_hours / half_life_hours), 0..1")
    importance: float = Field(description="0..1")
    top_terms: dict[str, float] = Field(
        description="the (at most 5) query terms contributing most BM25, term -> contribution")
    validity: str | None = Field(
        default=None, description="'superseded by X since T' or 'ended T'; null while the "
                                  "fact holds")


class RecallHit(_Open):
    memory_id: str
    content: str
    type: str
    version: int
    score: float
    importance: float
    conversation_id: str | None = None
    created_at: str
    metadata: dict = Field(default_factory=dict)
    author: str = ""
    tags: list[str] = Field(default_factory=list)
    agent_id: str = Field(default="", description="the agent that wrote it; '' none")
    run_id: str = Field(default="", description="the agent's run it came from; '' none")
    valid_from: str | None = None
    valid_until: str | None = Field(default=None, description="null while the fact holds")
    superseded_by: str | None = None
    explain: ExplainSummary


class SearchOut(_Open):
    """``POST /api/v1/recall``'s answer, each explanation summarised."""

    recall_id: str | None = Field(description=(
        "this recall's trace: pass it to recall_feedback; null when it was not traced"))
    results: list[RecallHit]
    match_mode_used: str
    profile: str
    took_ms: float


class MemoryPage(_Open):
    memories: list[MemoryOut]
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null "
                                                "on the last page")


class ConflictOut(_Open):
    """A proposed supersession, as ``GET /api/v1/conflicts/{id}`` answers it: ``newer``
    would make ``older`` no longer true."""

    id: int
    user_id: str
    newer: str = Field(description="memory id")
    older: str = Field(description="memory id")
    confidence: float = Field(description="0..1")
    reason: str = ""
    evidence: dict = Field(default_factory=dict, description="the slot and the words")
    status: str = Field(description="open, accepted or rejected")
    created_at: str | None = None
    decided_at: str | None = None
    decided_by: str | None = None
    decision_reason: str = ""


class ConflictPage(_Open):
    conflicts: list[ConflictOut]
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null "
                                                "on the last page")


class Forgotten(_Open):
    memory_id: str
    forgotten: bool
    deleted_at: str | None


class SessionOut(_Open):
    session_id: str
    user_id: str
    agent_id: str = ""
    total: int = Field(description="messages in the session")
    summary: str = ""


class Appended(_Open):
    length: int = Field(description="messages in the session after the append")


class ContextMessage(_Open):
    seq: int = Field(description="the message's number in the session, from 1 (promote "
                                 "takes it)")
    role: str
    content: str
    at: str


class ContextOut(_Open):
    """``GET /api/v1/sessions/{id}/context``: the rolling summary and the newest messages."""

    summary: str
    summary_method: str = Field(default="", description="who wrote the summary: local, llm, "
                                                        "or empty before the first fold")
    messages: list[ContextMessage] = Field(description="oldest first")
    total: int = Field(description="every message of the session")


class SummaryOut(_Open):
    """``POST /api/v1/sessions/{id}/summarise``: the whole session's summary now."""

    summary: str
    method: str = Field(description="local, or llm when the language model wrote it")
    chars: int


class CandidateOut(_Open):
    content: str = Field(description="the memory, standing alone (speaker and date resolved)")
    seqs: list[int] = Field(description="the session messages it comes from")
    type: str
    confidence: float = Field(description="0..1")


class ExtractOut(_Open):
    """``POST /api/v1/sessions/{id}/extract``: the memories worth keeping from a session."""

    candidates: list[CandidateOut]
    method: str = Field(description="local, or llm when the language model found them")
    memory_ids: list[str] | None = Field(
        default=None, description="the memories written (dry_run false), in candidate order")


class AddMemoryOut(MemoryOut):
    """``add_memory``'s answer: the memory; with ``infer``, ``memories`` (those extracted
    from the text and written), ``inferred`` true and ``method`` instead."""

    memory_id: str | None = None
    user_id: str | None = None
    type: str | None = None
    content: str | None = None
    importance: float | None = Field(default=None, description="0..1")
    version: int | None = None
    memories: list[MemoryOut] | None = None
    inferred: bool | None = None
    method: str | None = None


class FeedbackOut(_Open):
    """``POST /api/v1/recalls/{recall_id}/feedback``'s answer."""

    id: int
    recall_id: str
    memory_id: str
    actor: str
    grade: int = Field(description="0 (useless or wrong) .. 3 (exactly what was needed)")
    note: str
    created_at: str
    updated_at: str
