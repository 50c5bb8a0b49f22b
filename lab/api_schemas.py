"""The typed answers of the lab's API routes (``lab.api``): profiles with their versions,
evaluations, judgments, query sets and runs."""

from typing import Any, Literal

from api.schemas import Iso, Out
from api.search_schemas import ProfileOut, ProfileSettingsOut


class LabProfileOut(ProfileOut):
    """A profile, who created it and its current version (``history_id`` null: unsaved)."""

    created_by: str
    history_id: int | None
    version: int


class ProfileVersionOut(ProfileSettingsOut):
    """One version of a profile: its number, when, who, why (``change`` create, update or
    delete) and its full settings then."""

    version: int
    history_id: int
    at: Iso
    change: Literal["create", "update", "delete"]
    changed_by: str
    reason: str
    is_default: bool


class ProfileHistoryOut(Out):
    versions: list[ProfileVersionOut]


class MetricsOut(Out):
    """Means over the queries (each 0..1): nDCG@k, P@k, recall@k, MRR within the top k."""

    ndcg: float
    precision: float
    recall: float
    mrr: float


class QueryScoreOut(Out):
    """One query of an evaluation: its metrics, the memory ids ranked and how many are
    relevant."""

    user_id: str
    query: str
    conversation_id: str | None
    ndcg: float
    precision: float
    recall: float
    mrr: float
    results: list[str]
    relevant: int


class EvaluationOut(Out):
    k: int
    metrics: MetricsOut
    per_query: list[QueryScoreOut]


class JudgmentOut(Out):
    """A grade 0-3 of a memory for a query, by a reviewer."""

    user_id: str
    query: str
    memory_id: str
    grade: int
    reviewer: str
    updated_at: Iso


class JudgmentPageOut(Out):
    judgments: list[JudgmentOut]
    next_cursor: str | None


class QuerySetOut(Out):
    id: int
    name: str
    user_id: str
    queries: list[str]
    notes: dict[str, str]
    created_by: str
    updated_at: Iso


class QuerySetPageOut(Out):
    query_sets: list[QuerySetOut]
    next_cursor: str | None


class RunItemOut(Out):
    """A run as listed: its means per profile (``metrics``: ``{profile: {metric: value}}``)."""

    id: int
    name: str
    created_by: str
    created_at: Iso
    k: int
    query_set: int | None
    metrics: dict[str, Any]


class RunPageOut(Out):
    runs: list[RunItemOut]
    next_cursor: str | None


class RunOut(RunItemOut):
    """An immutable evaluation run: the profiles as they were, the index statistics, the
    means per profile, each query's row and the results no judgment covers."""

    reviewer: str
    profiles: list[dict[str, Any]]
    index_stats: dict[str, Any]
    per_query: list[dict[str, Any]]
    unjudged: Any


class CompareColumnOut(Out):
    run: int
    label: str
    profile: str
    version: int | None
    metrics: dict[str, Any]


class CompareOut(Out):
    """Two runs side by side: a column per (run, profile), a row per query with each
    column's nDCG and the deltas of the profiles both ran (``shared``), and the mean deltas
    over the queries judged in both."""

    columns: list[CompareColumnOut]
    queries: list[dict[str, Any]]
    shared: list[str]
    mean_deltas: dict[str, dict[str, Any]]
