"""The typed answers of ``/sessions`` (``api.sessions``)."""

from typing import Any, Literal

from pydantic import Field

from api.schemas import Iso, MemoryTypeName, Out

MessageRole = Literal["user", "assistant", "system", "tool"]
SummaryMethod = Literal["", "local", "llm"]


class SessionOut(Out):
    """A session: ``hot`` whether Redis holds its window, ``ttl`` that window's seconds left
    (null: not hot), ``total`` its messages, ``summary`` of the folded ones and who wrote it
    (``summary_method`` local or llm; empty before the first fold)."""

    session_id: str
    user_id: str
    agent_id: str
    run_id: str
    hot: bool
    ttl: int | None
    total: int
    summary: str
    summary_method: SummaryMethod
    metadata: dict[str, Any]
    created_at: Iso
    updated_at: Iso


class SessionItemOut(Out):
    session_id: str
    agent_id: str
    updated_at: Iso


class SessionPageOut(Out):
    sessions: list[SessionItemOut]
    next_cursor: str | None


class AppendOut(Out):
    length: int = Field(description="the session's messages after the append")


class MessageOut(Out):
    seq: int
    role: MessageRole
    content: str
    at: Iso


class ContextOut(Out):
    """The summary of the folded messages (empty when read ``at`` a moment) and the newest
    messages after it, oldest first; ``total`` messages in all; ``hot`` read from Redis."""

    summary: str
    summary_method: SummaryMethod
    total: int
    hot: bool
    messages: list[MessageOut]


class SummaryOut(Out):
    summary: str
    method: Literal["local", "llm"]
    chars: int


class CandidateOut(Out):
    """A memory worth keeping: its text, the messages (``seqs``) it came from, its type and
    the extractor's confidence (0..1)."""

    content: str
    seqs: list[int]
    type: MemoryTypeName
    confidence: float


class ExtractOut(Out):
    """The candidates; ``memory_ids`` the memories written (``dry_run: false`` only)."""

    candidates: list[CandidateOut]
    method: Literal["local", "llm"]
    memory_ids: list[str] = Field(default=None)
