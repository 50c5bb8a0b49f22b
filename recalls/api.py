"""The recall log's API: ``GET /recalls``, ``GET /recalls/{recall_id}``, ``POST
/recalls/{recall_id}/feedback``. Thin, as the rest of ``api``; mounted by ``api.v1``.

A token sees the recalls of its namespaces; one restricted to agents sees those of its
agents and those it made itself (that token, not its user's other tokens nor the
console). Another namespace's recall is a 404.
"""

from typing import Any

from ninja import Router
from pydantic import Field, StrictBool, StrictInt

from accounts.roles import require_role
from api.core import Strict, iso_or_none, require_namespace
from api.lookups import recall_or_404
from api.pagination import cursor_page
from api.schemas import ONE, READ, WRITE, Iso, Out, errors, page_limit
from memories.errors import InvalidInput
from memories.validation import clean_identifier, parse_iso_datetime
from recalls import feedback as recall_feedback
from recalls import readers
from recalls.log import INTERFACES
from recalls.models import Recall, RecallFeedback

router = Router(tags=["recalls"])
MAX_LIMIT = 500


class RecallResultOut(Out):
    memory_id: str
    version: int
    rank: int
    score: float
    explain: dict[str, Any]


class FeedbackOut(Out):
    id: int
    recall_id: str
    memory_id: str
    actor: str
    grade: int
    note: str
    created_at: Iso
    updated_at: Iso


class RecallTraceOut(Out):
    id: str
    at: Iso
    user_id: str
    agent_id: str | None
    actor: str
    interface: str
    query: str
    profile: str
    profile_version: int | None
    match_mode: str
    filters: dict[str, Any]
    time_range: dict[str, Any] | None
    took_ms: float
    results: list[RecallResultOut]
    feedback: list[FeedbackOut]


class RecallPageOut(Out):
    recalls: list[RecallTraceOut]
    next_cursor: str | None


class FeedbackIn(Strict):
    # Strict: ``"grade": true`` is no grade 1, ``"useful": "yes"`` or ``1`` no true.
    memory_id: str = Field(max_length=20)
    grade: StrictInt | None = Field(default=None, ge=0, le=3)
    useful: StrictBool | None = None
    note: str = Field(default="", max_length=recall_feedback.NOTE_MAX)


def feedback_out(f: RecallFeedback) -> dict:
    return {"id": f.id, "recall_id": f.recall_key, "memory_id": f.memory_id,
            "actor": f.actor, "grade": f.grade, "note": f.note,
            "created_at": iso_or_none(f.created_at), "updated_at": iso_or_none(f.updated_at)}


def trace_out(r: Recall) -> dict:
    """A trace's API shape: its results in the order the recall answered them."""
    return {
        "id": r.recall_id, "at": iso_or_none(r.at), "user_id": r.user_id,
        "agent_id": r.agent_id or None, "actor": r.actor, "interface": r.interface,
        "query": r.query, "profile": r.profile, "profile_version": r.profile_version,
        "match_mode": r.match_mode, "filters": r.filters, "time_range": r.time_range,
        "took_ms": r.took_ms,
        "results": [{"memory_id": x.memory_id, "version": x.version, "rank": x.rank,
                     "score": x.score, "explain": x.explain}
                    for x in sorted(r.results.all(), key=lambda x: x.rank)],
        "feedback": [feedback_out(f) for f in r.feedback.all()],
    }


@router.get("/recalls", response={200: RecallPageOut, **errors(*READ)})
def list_recalls(request, user_id: str, agent_id: str | None = None, actor: str | None = None,
                 interface: str | None = None, since: str | None = None,
                 until: str | None = None, q: str = "", cursor: str | None = None,
                 limit: int = page_limit(100, MAX_LIMIT)):
    """A namespace's traced recalls, newest first: ``{"recalls", "next_cursor"}``.
    ``since`` (inclusive) and ``until`` (exclusive) bound the recall's time (ISO 8601);
    ``q`` keeps recalls whose query holds every word; ``interface`` one of rest, mcp,
    console, python, typescript, langgraph."""
    require_role(request.user, "viewer")
    user_id = clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    if interface is not None and interface not in INTERFACES:
        raise InvalidInput(f"interface must be one of {', '.join(INTERFACES)}",
                           field="interface")
    where = readers.RecallFilter(
        user_ids=(user_id,),
        agent_id=clean_identifier(agent_id, "agent_id") if agent_id else None,
        actor=actor or None, interface=interface,
        since=parse_iso_datetime(since, "since") if since else None,
        until=parse_iso_datetime(until, "until") if until else None,
        q=q[:200], agents=tuple(getattr(request, "token_agents", None) or ()),
        own_token=getattr(request, "token_pk", None))
    rows, next_cursor = cursor_page(readers.recalls_matching(where), order=("-at", "-recall_id"),
                                    cursor=cursor, limit=limit, maximum=MAX_LIMIT)
    return {"recalls": [trace_out(r) for r in rows], "next_cursor": next_cursor}


@router.get("/recalls/{recall_id}", response={200: RecallTraceOut, **errors(*ONE)})
def get_recall(request, recall_id: str):
    """One traced recall: what it was asked, by whom, and what it answered, in order."""
    require_role(request.user, "viewer")
    return trace_out(recall_or_404(request, recall_id))


@router.post("/recalls/{recall_id}/feedback",
             response={200: FeedbackOut, **errors(*WRITE, 404)})
def give_feedback(request, recall_id: str, payload: FeedbackIn):
    """Say whether one result of a recall helped: ``grade`` 0..3 or ``useful`` true|false
    (3 or 0), and a ``note``. One per result and actor: giving it again replaces it."""
    require_role(request.user, "viewer")
    recall = recall_or_404(request, recall_id)
    given, _created = recall_feedback.feedback_give(
        recall=recall, memory_id=payload.memory_id, actor=request.user.get_username(),
        grade=payload.grade, useful=payload.useful, note=payload.note)
    return feedback_out(given)
