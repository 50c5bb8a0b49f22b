"""Ranking lab API: profiles (create, change, delete, versions), evaluation, judgments, query
sets and runs. Thin, as the rest of ``api``: check the shape, call the lab services, shape the
reply; errors follow the same ``{"error": {...}}`` conventions (its exception handlers).

Mounted by ``api.v1`` with ``api.add_router("/", router)``.
"""

from django.http import HttpRequest
from ninja import Router, Status
from pydantic import Field, StrictInt

from accounts.roles import require_role
from api.core import (
    Strict,
    api,
    is_restricted,
    redis_error_response,
    require_every_agent,
    require_namespace,
    require_unrestricted,
)
from api.pagination import MAX_LIMIT, cursor_page
from api.schemas import ONE, READ, WRITE, MatchMode, errors, page_limit
from api.search import profile_out
from api.search_schemas import Ranker, RecencyFrom, Temporal
from lab import evaluation as lab_evaluation
from lab import judgments as lab_judgments
from lab import query_sets as lab_query_sets
from lab import runs as lab_runs
from lab.api_schemas import (
    CompareOut,
    EvaluationOut,
    JudgmentOut,
    JudgmentPageOut,
    LabProfileOut,
    ProfileHistoryOut,
    QuerySetOut,
    QuerySetPageOut,
    RunOut,
    RunPageOut,
)
from lab.models import EvalRun, Judgment, QuerySet
from memories import store
from memories.errors import InvalidInput, PermissionDenied
from memories.validation import clean_identifier
from search import profile_services
from search.models import RankingProfile

router = Router(tags=["lab"])


class ProfileSettings(Strict):
    ranker: Ranker | None = None
    k1: float | None = None
    b: float | None = None
    w_relevance: float | None = None
    w_recency: float | None = None
    w_importance: float | None = None
    half_life_hours: float | None = None
    recency_from: RecencyFrom | None = None
    stemming: bool | None = None
    synonyms: bool | None = None
    context: bool | None = None
    match_mode: MatchMode | None = None
    temporal: Temporal | None = None
    w_time: float | None = None
    w_semantic: float | None = None
    is_default: bool | None = None


class ProfileIn(ProfileSettings):
    name: str


class ProfilePatch(ProfileSettings):
    name: str | None = None
    reason: str = Field(default="", max_length=1000)


class EvalQueryIn(Strict):
    user_id: str
    query: str = Field(max_length=lab_evaluation.QUERY_MAX_CHARS)
    conversation_id: str | None = None
    relevant: list[str] | dict[str, int]  # at most RELEVANT_MAX (the service checks)


class EvaluateIn(Strict):
    profile: str | None = None
    k: int = Field(default=10, ge=1, le=lab_evaluation.K_MAX)
    queries: list[EvalQueryIn] = Field(max_length=lab_evaluation.QUERIES_MAX)


class JudgmentIn(Strict):
    user_id: str
    query: str
    memory_id: str
    grade: StrictInt  # true, "3" or 2.0 is no grade (the writer checks 0..3)


class QuerySetIn(Strict):
    name: str
    user_id: str
    # Required unless ``from_feedback`` (then left out: the set's queries are the namespace's
    # logged queries that received recall feedback, most graded first).
    queries: list[str] | None = None
    notes: dict[str, str] | None = None  # {query: note}, each query one of ``queries``
    from_feedback: bool = False
    # With ``from_feedback``: at most this many queries (default and bound QUERIES_MAX).
    limit: int | None = Field(default=None, ge=1, le=lab_evaluation.QUERIES_MAX)


class QuerySetPatch(Strict):
    name: str | None = None
    user_id: str | None = None
    queries: list[str] | None = None
    notes: dict[str, str] | None = None  # replaces every note; a removed query loses its note


class RunIn(Strict):
    name: str
    query_set: int
    profiles: list[str]
    k: int = 10
    # Whose grades are the gains: "" every reviewer's (mean), a reviewer's name, or "agent
    # feedback" (lab.judgments.AGENT_FEEDBACK): the agents' recall feedback.
    reviewer: str = ""


def lab_profile_out(profile: RankingProfile) -> dict:
    """``GET /profiles``'s shape plus who created it and its current version."""
    return {
        **profile_out(profile),
        "created_by": profile.created_by,
        **profile_services.profile_version(profile),
    }


def _body(payload, **dump) -> dict:
    """The request body as a dict, refused (400 naming the field) if any text in it is not
    valid Unicode."""
    return payload.model_dump(**dump)


# POST /profiles shares its path with ``GET /profiles`` in api/sessions.py. Django resolves a
# path to the first pattern that matches it, and django-ninja gives each router its own
# pattern per path, so a POST declared on this router would meet the GET-only view first and
# get a 405. Declared on ``api`` itself, it joins that path's view. (Moving GET /profiles here
# would allow a plain ``@router.post``.)
@api.post("/profiles", response={201: LabProfileOut, **errors(*WRITE, 409)}, tags=["lab"])
def create_profile(request: HttpRequest, payload: ProfileIn):
    """Create a profile (editor; ``is_default`` needs admin and an unrestricted token): 201
    with the profile."""
    data = _body(payload, exclude_unset=True)
    if data.get("is_default"):
        require_unrestricted(request, "marking the default profile", field="is_default")
    profile = profile_services.profile_create(actor=request.user, **data)
    return Status(201, lab_profile_out(profile))


def _require_own_if_restricted(request, name: str) -> None:
    """A namespace-restricted token (even an admin's) changes or deletes only the profiles its
    user created: any other profile may be what other namespaces recall with."""
    if not is_restricted(request):
        return
    profile = profile_services.profile_get(name)
    if profile.builtin or profile.created_by != request.user.get_username():
        raise PermissionDenied("a token restricted to namespaces changes only the profiles "
                               "its user created", field="name")


@router.get("/profiles/{name}", response={200: LabProfileOut, **errors(*ONE)})
def get_profile(request, name: str):
    require_role(request.user, "viewer")
    return lab_profile_out(profile_services.profile_get(name))


@router.patch("/profiles/{name}", response={200: LabProfileOut, **errors(*WRITE, 404, 409)})
def patch_profile(request, name: str, payload: ProfilePatch):
    """Change settings, rename (``name``) or set the default (admin). Editors change their own
    profiles, admins any; built-ins keep their name and settings. Each change is a version."""
    require_role(request.user, "editor")
    data = _body(payload, exclude_unset=True)
    if data.get("is_default"):
        require_unrestricted(request, "marking the default profile", field="is_default")
    _require_own_if_restricted(request, name)
    new_name = data.pop("name", None)
    profile = profile_services.profile_update(actor=request.user, name=name, new_name=new_name, **data)
    return lab_profile_out(profile)


@router.delete("/profiles/{name}", response={204: None, **errors(*ONE)})
def delete_profile(request, name: str, reason: str = ""):
    """Delete a profile (admin); built-ins and the default are refused (400, ``name``)."""
    require_role(request.user, "admin")
    _require_own_if_restricted(request, name)
    profile_services.profile_delete(actor=request.user, name=name, reason=reason)
    return Status(204, None)


@router.get("/profiles/{name}/history", response={200: ProfileHistoryOut, **errors(*ONE)})
def profile_history(request, name: str):
    """Every version of a profile, oldest first, with its full settings."""
    require_role(request.user, "viewer")
    versions = profile_services.profile_versions(profile_services.profile_get(name))
    return {"versions": [{**v, "at": v["at"].isoformat()} for v in versions]}


@router.post("/evaluate", response={200: EvaluationOut, **errors(*WRITE, 404, 429, 503)})
def evaluate(request, payload: EvaluateIn):
    """nDCG@k, P@k, recall@k and MRR (within the top k) of a profile over labelled queries:
    ``{"k", "metrics": {"ndcg", "precision", "recall", "mrr"}, "per_query": [...]}``. Bounded
    (400 naming the field: ``lab.evaluation``'s limits) and timed (413 ``queries`` past
    ``MEMORY_EVALUATION_SECONDS``)."""
    require_role(request.user, "viewer")
    require_every_agent(request, "an evaluation")
    queries = _body(payload)["queries"]
    for q in queries:
        require_namespace(request, q["user_id"])
    try:
        return lab_evaluation.evaluate(profile=payload.profile, k=payload.k, queries=queries)
    except store.RedisError as exc:
        return redis_error_response(request, exc, "the search index (Redis)")


def judgment_out(j: Judgment) -> dict:
    return {
        "user_id": j.user_id,
        "query": j.query,
        "memory_id": j.memory_id,
        "grade": j.grade,
        "reviewer": j.reviewer,
        "updated_at": j.updated_at.isoformat(),
    }


@router.get("/judgments", response={200: JudgmentPageOut, **errors(*READ)})
def list_judgments(request, user_id: str, query: str = "", reviewer: str = "",
                   cursor: str | None = None, limit: int = page_limit(100, MAX_LIMIT)):
    """Judgments of a namespace, optionally of one query and one reviewer, paged:
    ``{"judgments", "next_cursor"}``."""
    require_role(request.user, "viewer")
    require_every_agent(request, "judgments")
    require_namespace(request, clean_identifier(user_id, "user_id"))
    rows = Judgment.objects.filter(user_id=user_id)
    if query:
        rows = rows.filter(query=lab_evaluation.clean_query(query))
    if reviewer:
        rows = rows.filter(reviewer=reviewer)
    rows, next_cursor = cursor_page(rows, order=("query", "memory_id", "pk"), cursor=cursor,
                                    limit=limit)
    return {"judgments": [judgment_out(j) for j in rows], "next_cursor": next_cursor}


@router.post("/judgments", response={200: JudgmentOut, 201: JudgmentOut, **errors(*WRITE, 404)})
def set_judgment(request, payload: JudgmentIn):
    """Grade a memory 0-3 for a query as the caller (editor): 201 new, 200 replaced."""
    require_every_agent(request, "judgments")
    require_namespace(request, payload.user_id)
    judgment, created = lab_judgments.judgment_set(actor=request.user, **_body(payload))
    return Status(201 if created else 200, judgment_out(judgment))


def _require_lab_sets(request) -> None:
    """Query sets and runs span namespaces, and rank and judge every agent's memories: a token
    restricted to namespaces or to agents gets a 403."""
    require_namespace(request, None)
    require_every_agent(request, "query sets and runs")


def queryset_out(qs: QuerySet) -> dict:
    return {
        "id": qs.pk,
        "name": qs.name,
        "user_id": qs.user_id,
        "queries": qs.queries,
        "notes": {q: n for q, n in (qs.notes or {}).items() if q in qs.queries},
        "created_by": qs.created_by,
        "updated_at": qs.updated_at.isoformat(),
    }


@router.get("/query-sets", response={200: QuerySetPageOut, **errors(*READ)})
def list_querysets(request, cursor: str | None = None, limit: int = page_limit(100, MAX_LIMIT)):
    """Query sets by name, paged: ``{"query_sets", "next_cursor"}``."""
    _require_lab_sets(request)
    require_role(request.user, "viewer")
    rows, next_cursor = cursor_page(QuerySet.objects.all(), order=("name", "pk"),
                                    cursor=cursor, limit=limit)
    return {"query_sets": [queryset_out(q) for q in rows], "next_cursor": next_cursor}


@router.post("/query-sets", response={201: QuerySetOut, **errors(*WRITE, 409)})
def create_queryset(request, payload: QuerySetIn):
    """Create a query set (editor): ``{"name", "user_id", "queries", "notes"?}``, or
    ``{"name", "user_id", "from_feedback": true, "limit"?}`` for the namespace's logged
    queries that received recall feedback, most graded first (400 ``user_id`` when none
    did; 400 ``queries`` when both are given), to run with the rater "agent feedback"."""
    _require_lab_sets(request)
    data = _body(payload)
    from_feedback, limit = data.pop("from_feedback"), data.pop("limit")
    if from_feedback:
        if data.pop("queries") is not None:
            raise InvalidInput("give queries or from_feedback, not both", field="queries")
        qs = lab_query_sets.queryset_from_feedback(
            actor=request.user, limit=limit or lab_evaluation.QUERIES_MAX, **data)
    elif limit is not None:
        raise InvalidInput("limit goes with from_feedback", field="limit")
    else:
        qs = lab_query_sets.queryset_create(actor=request.user, **data)
    return Status(201, queryset_out(qs))


@router.get("/query-sets/{qs_id}", response={200: QuerySetOut, **errors(*ONE)})
def get_queryset(request, qs_id: int):
    _require_lab_sets(request)
    require_role(request.user, "viewer")
    return queryset_out(lab_query_sets.queryset_get(qs_id))


@router.patch("/query-sets/{qs_id}", response={200: QuerySetOut, **errors(*WRITE, 404, 409)})
def patch_queryset(request, qs_id: int, payload: QuerySetPatch):
    _require_lab_sets(request)
    qs = lab_query_sets.queryset_update(actor=request.user, pk=qs_id, **_body(payload, exclude_unset=True))
    return queryset_out(qs)


@router.get("/runs", response={200: RunPageOut, **errors(*READ)})
def list_runs(request, cursor: str | None = None, limit: int = page_limit(100, MAX_LIMIT)):
    """Runs newest first, without their per-query rows, paged: ``{"runs", "next_cursor"}``."""
    _require_lab_sets(request)
    require_role(request.user, "viewer")
    runs, next_cursor = cursor_page(EvalRun.objects.defer("per_query", "unjudged"),
                                    order=("-created_at", "-pk"), cursor=cursor, limit=limit)
    return {
        "runs": [
            {
                "id": r.pk,
                "name": r.name,
                "created_by": r.created_by,
                "created_at": r.created_at.isoformat(),
                "k": r.k,
                "query_set": r.query_set_id,
                "metrics": r.metrics,
            }
            for r in runs
        ],
        "next_cursor": next_cursor,
    }


@router.post("/runs", response={201: RunOut, **errors(*WRITE, 404, 429, 503)})
def create_run(request, payload: RunIn):
    """Evaluate profiles over a query set with the judgments as gains (``reviewer``: blank
    every reviewer's mean, a reviewer's name, or ``"agent feedback"`` the agents' recall
    feedback, one rounded mean grade per query and memory); the saved run is immutable."""
    _require_lab_sets(request)
    try:
        run = lab_runs.run_create(actor=request.user, **_body(payload))
    except store.RedisError as exc:
        return redis_error_response(request, exc, "the search index (Redis)")
    return Status(201, lab_runs.run_out(run))


@router.get("/runs/compare", response={200: CompareOut, **errors(*READ, 404)})
def compare_runs(request, a: int, b: int):
    """Two runs side by side: each (run, profile)'s metrics, and nDCG per query."""
    _require_lab_sets(request)
    require_role(request.user, "viewer")
    if a < 1 or b < 1:
        raise InvalidInput("a and b are run ids", field="a" if a < 1 else "b")
    return lab_runs.run_compare(lab_runs.run_get(a), lab_runs.run_get(b))


@router.get("/runs/{run_id}", response={200: RunOut, **errors(*ONE)})
def get_run(request, run_id: int):
    _require_lab_sets(request)
    require_role(request.user, "viewer")
    return lab_runs.run_out(lab_runs.run_get(run_id))
