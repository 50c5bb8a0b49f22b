"""The typed answers of ``/recall``, ``/analyze`` and ``/profiles`` (``api.search``, and the
lab's profile routes)."""

from typing import Literal

from pydantic import Field

from api.schemas import MatchMode, MemoryBase, Out

Ranker = Literal["bm25", "keyword"]
RecencyFrom = Literal["created_at", "accessed_at"]
Temporal = Literal["off", "filter", "boost"]


class ExplainOut(Out):
    """How a hit scored: the BM25 score and its normalised ``relevance``, the ``recency`` and
    ``importance`` parts, each query term's share (``terms``), the profile's ``weights``,
    terms matched only in the context, the time boost (1 = none) and the time range's
    share, the semantic cosine (null: not rescored) and ``validity`` ("superseded by X since
    T", "ended T"; null while the fact holds)."""

    bm25: float
    relevance: float
    recency: float
    importance: float
    terms: dict[str, float]
    weights: dict[str, float]
    context_terms: list[str]
    time: float
    time_term: float
    semantic: float | None
    validity: str | None


class RecallHitOut(MemoryBase):
    """A memory found by recall: the memory's shape, its ``score`` and why."""

    score: float
    explain: ExplainOut


class TimeRangeOut(Out):
    """The time range the query named (``range``), where it came from, how it was used
    (``mode`` off, filter or boost) and whether it changed the ranking."""

    range: str
    from_: str = Field(alias="from")
    mode: Temporal
    applied: bool


class RecallOut(Out):
    # The recall's trace in the recall log (GET /recalls/{recall_id}); null when it was not
    # traced (sampled out, or Redis refused the trace).
    recall_id: str | None
    results: list[RecallHitOut]
    match_mode_used: MatchMode
    profile: str
    time: TimeRangeOut | None
    took_ms: float


class AnalyzeOut(Out):
    tokens: list[str]
    profile: str


class ProfileSettingsOut(Out):
    """A ranking profile's name and settings (``docs/knowledge-manager.md`` says what each
    does): the part every profile shape shares, the current one and each version."""

    name: str
    ranker: Ranker
    k1: float
    b: float
    w_relevance: float
    w_recency: float
    w_importance: float
    half_life_hours: float
    recency_from: RecencyFrom
    stemming: bool
    synonyms: bool
    context: bool
    match_mode: MatchMode
    temporal: Temporal
    w_time: float
    w_semantic: float


class ProfileOut(ProfileSettingsOut):
    """A ranking profile as it is now."""

    is_default: bool
    builtin: bool


class ProfilePageOut(Out):
    profiles: list[ProfileOut]
    next_cursor: str | None
