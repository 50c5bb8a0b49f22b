"""Typed models of the API's response shapes (pydantic; datetimes parsed from ISO 8601).

Every model keeps fields it does not declare (``extra="allow"``, read them as attributes or
through ``model_extra``): the API adds fields and never renames them, so an older client
keeps working against a newer server.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

MemoryType = Literal["long_term", "short_term", "working"]
MatchMode = Literal["any", "all", "all_then_any"]
Supersession = Literal["off", "propose", "apply"]
ConflictStatus = Literal["open", "accepted", "rejected"]


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=False)


class Memory(Model):
    """``GET /memories/{id}`` and every write that answers a memory. ``importance`` 0..1;
    ``version`` starts at 1, +1 per change; ``deleted_at`` set once forgotten.
    ``deduplicated`` is true when a create found the same content in the same scope;
    ``warning`` is ``"index_pending"`` when Redis missed the write (repaired later)."""

    memory_id: str
    user_id: str
    conversation_id: str | None = None
    type: MemoryType = "long_term"
    content: str
    context: str = ""
    keywords: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    importance: float = 0.0
    access_count: int = 0
    accessed_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expire_at: datetime | None = None
    source: str = ""
    author: str = ""
    agent_id: str = ""
    run_id: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str = ""
    version: int = 1
    deleted_at: datetime | None = None
    deleted_by: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    supersedes: list[str] = Field(default_factory=list)
    deduplicated: bool = False
    warning: str | None = None

    @property
    def holds(self) -> bool:
        """Whether the fact holds now: not superseded, not ended (``valid_until`` unset or
        still ahead)."""
        return self.superseded_by is None and (
            self.valid_until is None or self.valid_until > datetime.now(UTC))


class Explain(Model):
    """Why a hit scored what it did: raw ``bm25``, the weighted parts of the final score
    (``relevance``, ``recency``, ``importance``), and each query term's BM25 contribution."""

    bm25: float = 0.0
    relevance: float = 0.0
    recency: float = 0.0
    importance: float = 0.0
    terms: dict[str, float] = Field(default_factory=dict)
    validity: str | None = None  # "superseded by X since T" / "ended T"; None while it holds


class RecallHit(Model):
    memory_id: str
    content: str
    type: MemoryType
    version: int
    score: float
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    importance: float
    conversation_id: str | None = None
    author: str = ""
    tags: list[str] = Field(default_factory=list)
    agent_id: str = ""
    run_id: str = ""
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    explain: Explain


class RecallResult(Model):
    """``POST /recall``: hits sorted by final score (ties by ``memory_id``), the match mode
    used and the profile's name; ``took_ms`` in milliseconds; ``recall_id`` names its trace
    in the recall log (for ``recall_feedback``), None when it was not traced."""

    results: list[RecallHit]
    match_mode_used: str
    profile: str
    took_ms: float
    recall_id: str | None = None


class Proposal(Model):
    """A proposed supersession of the review queue: ``newer`` would make ``older`` (memory
    ids) no longer true; ``confidence`` 0..1, ``evidence`` the slot and the words."""

    id: int
    user_id: str
    newer: str
    older: str
    confidence: float
    reason: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)
    status: ConflictStatus
    created_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    decision_reason: str = ""


class Version(Model):
    """One row of ``GET /memories/{id}/history`` (oldest first)."""

    version: int
    kind: str
    content: str
    importance: float
    tags: list[str] = Field(default_factory=list)
    type: MemoryType
    changed_by: str | None = None
    reason: str = ""
    at: datetime


class Ready(Model):
    """``GET /memories/{id}/ready``: whether Redis holds the current version
    (``indexed_at`` in epoch seconds)."""

    ready: bool
    indexed_at: float | None = None


class AuditEvent(Model):
    at: datetime
    actor: str | None = None
    action: str
    target: str
    reason: str = ""


class Analysis(Model):
    """``POST /analyze``: one token per occurrence, in order, exactly as indexed."""

    tokens: list[str]
    profile: str | None = None


class Profile(Model):
    """A ranking profile: ``ranker`` ``bm25`` or ``keyword``, BM25 ``k1``/``b``, the
    weights of relevance, recency and importance, ``half_life_hours`` of recency."""

    name: str
    ranker: str = "bm25"
    k1: float = 1.2
    b: float = 0.75
    w_relevance: float = 1.0
    w_recency: float = 0.0
    w_importance: float = 0.0
    half_life_hours: float | None = None
    recency_from: str = "created_at"
    stemming: bool = False
    synonyms: bool = False
    match_mode: str = "any"
    is_default: bool = False
    builtin: bool = False


class Metrics(Model):
    ndcg: float
    precision: float
    recall: float
    mrr: float


class Evaluation(Model):
    """``POST /evaluate``: nDCG@k, P@k, recall@k and MRR (within the top k), each 0..1."""

    k: int
    metrics: Metrics
    per_query: list[dict[str, Any]] = Field(default_factory=list)


class JobAccepted(Model):
    job_id: str


class Job(Model):
    """``GET /jobs/{id}``: ``progress`` 0..1; ``result`` once finished, ``error`` once failed."""

    status: Literal["queued", "started", "finished", "failed"]
    progress: float = 0.0
    result: Any = None
    error: str | None = None

    @property
    def done(self) -> bool:
        return self.status in ("finished", "failed")


class IndexHealth(Model):
    """``GET /index/health``: counts in the database and in Redis, ``drift`` (cached,
    computed at ``drift_at``), per-namespace statistics, queue sizes and failed jobs."""

    memories_in_db: int
    memories_indexed: int
    drift: int
    drift_at: Any = None
    namespaces: Any = None
    stats: Any = None
    queues: Any = None
    failed_jobs: Any = None


class ExportDocument(Model):
    schema_version: int
    exported_at: datetime
    memories: list[dict[str, Any]]


class ConsolidationGroup(Model):
    memory_ids: list[str]
    merged_text: str
    similarity: float


class ConsolidationPlan(Model):
    threshold: float | None = None
    groups: list[ConsolidationGroup]


class Session(Model):
    """``GET /sessions/{id}``: ``hot`` when Redis holds its window, ``ttl`` in seconds,
    ``total`` = every message of the session."""

    session_id: str
    user_id: str
    agent_id: str = ""
    hot: bool = False
    ttl: int | None = None
    total: int = 0
    summary: str = ""
    summary_method: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class SessionListing(Model):
    session_id: str
    agent_id: str = ""
    updated_at: datetime


class Appended(Model):
    length: int


class ContextMessage(Model):
    """``seq``: the message's number in the session (from 1; what ``promote_message``
    takes); None from a server older than this field."""

    role: str
    content: str
    at: datetime | None = None
    seq: int | None = None


class Context(Model):
    """``GET /sessions/{id}/context``: the rolling summary and the newest messages,
    oldest first; ``total`` = every message of the session; ``summary_method`` who wrote
    the summary (``local``, ``llm``, or empty before the first fold)."""

    summary: str = ""
    summary_method: str = ""
    messages: list[ContextMessage]
    total: int


class Summary(Model):
    """``POST /sessions/{id}/summarise``: the whole session's summary now; ``method`` is
    ``local`` or ``llm`` (the language model wrote it); ``chars`` its length."""

    summary: str
    method: str
    chars: int


class Inferred(Model):
    """``POST /memories`` with ``infer``: the memories extracted from the text and written
    (each with ``deduplicated``); ``method`` ``local`` or ``llm``."""

    memories: list[Memory]
    inferred: bool = True
    method: str = "local"


class Candidate(Model):
    """A memory drawn from a session: standing alone, with the messages (``seqs``) it comes
    from and the extractor's ``confidence`` (0..1)."""

    content: str
    seqs: list[int]
    type: MemoryType = "long_term"
    confidence: float = 0.0


class Extraction(Model):
    """``POST /sessions/{id}/extract``: ``candidates``; ``memory_ids`` (in candidate order)
    when they were written; ``method`` ``local`` or ``llm``."""

    candidates: list[Candidate]
    method: str = "local"
    memory_ids: list[str] | None = None


class NamespaceRow(Model):
    """One row of ``GET /namespaces``: a namespace (``user_id``) and one conversation of it
    (None = its user-wide memories), with the number of live memories there."""

    user_id: str
    conversation_id: str | None = None
    memories: int = 0


class Webhook(Model):
    """A webhook endpoint; ``secret`` (``whsec_...``) only in the answers of create, get
    and rotate-secret. ``namespaces`` empty = every namespace."""

    id: int
    url: str
    description: str = ""
    events: list[str]
    namespaces: list[str] = Field(default_factory=list)
    active: bool = True
    secret: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Delivery(Model):
    """One event for one endpoint in its delivery log: ``status`` pending / delivered /
    failed / cancelled, ``attempts`` so far, the last HTTP status and error."""

    id: int
    event_id: str
    type: str
    namespace: str | None = None
    status: str
    attempts: int = 0
    last_status_code: int | None = None
    last_error: str = ""
    last_attempt_at: datetime | None = None
    next_attempt_at: datetime | None = None
    delivered_at: datetime | None = None
    created_at: datetime | None = None


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a list: its ``items`` and the ``next_cursor`` to pass as ``cursor`` for
    the next page (None on the last page)."""

    items: list[T]
    next_cursor: str | None = None
