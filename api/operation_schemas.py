"""The typed answers of ``/conflicts``, ``/audit`` and the operations routes (``/jobs``,
``/index/health``, ``/index/terms``, ``/export``, ``/import``, ``/cleanup``, ``/consolidate``)."""

from typing import Any, Literal

from pydantic import Field

from api.schemas import ConflictStatusName, Iso, Out


class ConflictOut(Out):
    """A proposed supersession: ``newer`` would end ``older`` (memory ids); ``confidence``
    0..1; ``evidence`` the claims that clash."""

    id: int
    user_id: str
    newer: str
    older: str
    confidence: float
    reason: str
    evidence: dict[str, Any]
    status: ConflictStatusName
    created_at: Iso | None
    decided_at: Iso | None
    decided_by: str
    decision_reason: str


class ConflictPageOut(Out):
    conflicts: list[ConflictOut]
    next_cursor: str | None


class AuditEventOut(Out):
    at: Iso
    actor: str
    action: str
    target: str
    reason: str


class AuditPageOut(Out):
    events: list[AuditEventOut]
    next_cursor: str | None


class JobStatusOut(Out):
    """A background job: ``progress`` 0..1, ``done`` of ``total`` steps when it counts them,
    ``result`` once finished (the job's own answer), ``error`` its last line once failed."""

    job_id: str
    status: Literal["queued", "started", "finished", "failed"]
    progress: float
    done: int | None
    total: int | None
    result: Any
    error: str | None
    func: str
    namespaces: list[str] | None


class HealthOut(Out):
    """Database against Redis: counts, ``drift`` (cached; ``drift_at`` when computed), the
    namespaces' index statistics, the queues, failed jobs, Redis memory (``full`` when it
    refuses writes), memories Redis cannot take and recall hits not yet folded."""

    memories_in_db: int
    memories_indexed: int
    drift: int
    drifted: list[str]
    drifted_statistics: list[str]
    namespaces: int
    stats: dict[str, dict[str, Any]]
    drift_at: Iso
    queues: dict[str, Any]
    failed_jobs: list[Any]
    failed_count: int
    redis: dict[str, Any]
    unindexable: dict[str, Any]
    access_pending: dict[str, Any]


class IndexTermsOut(Out):
    """Some terms of one index field of a namespace's live index: ``N`` live documents,
    ``total_len`` the sum of their lengths and ``avgdl`` their mean (tokens), ``generation``
    the live generation (0 before any reindex), ``df`` {term: documents holding it},
    ``postings`` {term: [memory_id, ...] in ascending memory_id order}."""

    N: int
    total_len: int
    avgdl: float
    generation: int
    df: dict[str, int]
    postings: dict[str, list[str]]


class ExportOut(Out):
    """A schema-versioned backup document (``POST /import`` takes it back): every field of
    each memory, with its history, the namespace's proposals, sessions, lab objects and
    recall feedback (schema 5: ``{"recall_key", "user_id", "query", "memory_id", "actor",
    "grade", "note", "created_at", "updated_at"}``; not the recall traces)."""

    schema_version: int
    exported_at: Iso
    user_id: str | None
    memories: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    sessions: list[dict[str, Any]]
    lab: dict[str, Any]
    feedback: list[dict[str, Any]]


class ImportOut(Out):
    """Counts: ``created`` and ``deduplicated`` (merge); a replace adds
    ``replaced_namespaces``, ``removed``, ``restored`` and ``conflicts``, and the sessions
    and lab objects restored; of a schema-5 document, ``feedback`` (recall feedback
    restored) and ``feedback_skipped`` (items whose memory the document lacks)."""

    created: int = Field(default=None)
    deduplicated: int
    replaced_namespaces: int = Field(default=None)
    removed: int = Field(default=None)
    restored: int = Field(default=None)
    conflicts: int = Field(default=None)
    feedback: int = Field(default=None)
    feedback_skipped: int = Field(default=None)


class CleanupPlanOut(Out):
    """What the forgetting policy would do: memory ids to forget, consolidate, archive."""

    user_id: str
    forget: list[str]
    consolidate: list[str]
    archive: list[str]


class CleanupUndoOut(Out):
    """The memories the run forgot or archived that came back (``restored``) and those left
    as they are (``skipped``: purged, restored or forgotten again since)."""

    run_id: str
    user_id: str
    restored: list[str]
    skipped: list[str]


class PlannedGroupOut(Out):
    group_id: str
    memory_ids: list[str]
    merged_text: str
    similarity: float


class ConsolidationPlanOut(Out):
    user_id: str
    threshold: float
    max_members: int
    groups: list[PlannedGroupOut]
