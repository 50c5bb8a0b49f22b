"""/recall, /analyze, /profiles."""

import datetime as dt

from ninja import Router
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from accounts.roles import require_role
from api.core import Strict, api, redis_error_response, require_namespace
from api.filters import Filters, parse_filters
from api.pagination import MAX_LIMIT, cursor_page
from api.schemas import READ, MatchMode, MemoryTypeName, errors, page_limit
from api.search_schemas import AnalyzeOut, ProfilePageOut, RecallOut
from integrations.metrics.registry import count_redis_error
from memories import store
from memories.errors import InvalidInput
from memories.validation import clean_identifier
from recalls.act import recall_traced
from search.index import fields as index_fields
from search.models import RankingProfile
from search.profiles import profile_resolve

router = Router()


class RecallIn(Strict):
    user_id: str
    query: str = Field(max_length=4096)
    conversation_id: str | None = None
    limit: int = Field(default=5, ge=1, le=100)
    types: list[MemoryTypeName] | None = None
    profile: str | None = None
    match_mode: MatchMode | None = None
    # Filters (ISO 8601 created_at bounds: since inclusive, until exclusive; the author as
    # written; every tag given) and the moment "yesterday" counts from (default: now).
    since: str | None = None
    until: str | None = None
    author: str | None = Field(default=None, max_length=128)
    tags: list[str] | None = Field(default=None, max_length=50)
    now: str | None = None
    # Facts over time: by default only facts valid now; ``as_of`` (ISO 8601) the facts that
    # held then; ``include_superseded`` every match with its validity.
    as_of: str | None = None
    include_superseded: bool = False
    # The agent scope and metadata equalities (dotted path -> string), as GET /memories
    # takes them (api.filters). An empty query with a filter lists the matches newest first.
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, str] | None = Field(default=None, max_length=10)


    @field_validator("types", mode="wrap")
    @classmethod
    def _types_named(cls, value, handler):
        """A bad type is an error of ``types`` (as before the enum), not of ``types.<n>``."""
        try:
            return handler(value)
        except ValueError as exc:
            raise PydanticCustomError(
                "enum", "types must be long_term, short_term or working") from exc


class AnalyzeIn(Strict):
    text: str = Field(max_length=65536)
    profile: str | None = None


@router.post("/recall", response={200: RecallOut, **errors(*READ, 404, 413, 503)},
             tags=["search"], by_alias=True)
def recall(request, payload: RecallIn):
    """Ranked memories for a query, each with its score explained."""
    require_role(request.user, "viewer")
    user_id = clean_identifier(payload.user_id, "user_id")
    require_namespace(request, user_id)
    conversation_id = clean_identifier(payload.conversation_id, "conversation_id", required=False)
    if payload.match_mode not in (None, "any", "all", "all_then_any"):
        raise InvalidInput("match_mode must be any, all or all_then_any", field="match_mode")
    if payload.types is not None and not set(payload.types) <= {"long_term", "short_term",
                                                                 "working"}:
        raise InvalidInput("types must be long_term, short_term or working", field="types")
    filters = recall_filters(request, payload)
    try:
        found, recall_id = recall_traced(
            actor=request.user.get_username(), interface=client_interface(request),
            token_id=getattr(request, "token_pk", None),
            user_id=user_id, query=payload.query, limit=payload.limit,
            conversation_id=conversation_id, types=payload.types, profile=payload.profile,
            match_mode=payload.match_mode, include_superseded=payload.include_superseded,
            **filters.search_args())
    except store.RedisError as exc:
        count_redis_error("api")
        return redis_error_response(request, exc, "the search index (Redis)")
    return {
        "recall_id": recall_id,
        "results": [hit_out(h) for h in found.results],
        "match_mode_used": found.match_mode_used,
        "profile": found.profile,
        "time": found.time,
        "took_ms": found.took_ms,
    }


# The clients name themselves in this header; their recalls are traced under that interface.
CLIENT_HEADER = "X-Memory-Client"
CLIENTS = ("python", "typescript", "langgraph")


def client_interface(request) -> str:
    """The interface a REST recall is traced under: the client named in ``X-Memory-Client``
    (python, typescript, langgraph), else rest."""
    named = request.headers.get(CLIENT_HEADER, "").strip().lower()
    return named if named in CLIENTS else "rest"


def recall_filters(request, payload: RecallIn) -> Filters:
    """The filters of a recall's body, checked (``api.filters.parse_filters``)."""
    return parse_filters(request, **{name: getattr(payload, name) for name in (
        "since", "until", "now", "as_of", "author", "tags", "agent_id", "run_id",
        "metadata")})


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()


def validity_note(h) -> str | None:
    """What explain says of a fact that no longer holds: "superseded by X since T" or
    "ended T"; None while it holds."""
    if h.valid_until is None:
        return None
    if h.superseded_by:
        return f"superseded by {h.superseded_by} since {_iso(h.valid_until)}"
    return f"ended {_iso(h.valid_until)}"


def hit_out(h) -> dict:
    """The API shape of one recall result (``search.results.Hit``)."""
    return {
        "memory_id": h.memory_id, "content": h.content, "type": h.type,
        "version": h.version, "score": h.score, "metadata": h.metadata,
        "created_at": _iso(h.created_at),
        "importance": h.importance, "conversation_id": h.conversation_id,
        "author": h.author, "tags": h.tags, "agent_id": h.agent_id, "run_id": h.run_id,
        "valid_from": _iso(h.valid_from), "valid_until": _iso(h.valid_until),
        "superseded_by": h.superseded_by,
        "explain": {"bm25": h.explain.bm25, "relevance": h.explain.relevance,
                    "recency": h.explain.recency, "importance": h.explain.importance,
                    "terms": h.explain.terms, "weights": h.explain.weights,
                    "context_terms": h.explain.context_terms, "time": h.explain.time,
                    "time_term": h.explain.time_term,
                    "semantic": h.explain.semantic, "validity": validity_note(h)}}


@router.post("/analyze", response={200: AnalyzeOut, **errors(*READ, 404, 413)}, tags=["search"])
def analyze(request, payload: AnalyzeIn):
    """The tokens a profile (default: the default profile) indexes for ``text``."""
    require_role(request.user, "viewer")
    prof = profile_resolve(payload.profile)
    analyzer = index_fields.ANALYZERS[index_fields.content_field(stemming=prof.stemming,
                                                                 context=prof.context)]
    return {"tokens": analyzer.tokens(payload.text), "profile": prof.name}


def profile_out(p: RankingProfile) -> dict:
    return {f: getattr(p, f) for f in (
        "name", "ranker", "k1", "b", "w_relevance", "w_recency", "w_importance",
        "half_life_hours", "recency_from", "stemming", "synonyms", "context", "match_mode",
        "temporal", "w_time", "w_semantic", "is_default",
        "builtin")}


# On the API's own router, with the lab's ``POST /profiles`` (lab/api.py): Django
# resolves a path to its first pattern, so both methods must share one router.
@api.get("/profiles", response={200: ProfilePageOut, **errors(*READ)}, tags=["profiles"])
def list_profiles(request, cursor: str | None = None, limit: int = page_limit(100, MAX_LIMIT)):
    """Ranking profiles by name: ``{"profiles", "next_cursor"}``."""
    require_role(request.user, "viewer")
    rows, next_cursor = cursor_page(RankingProfile.objects.all(), order=("name",),
                                    cursor=cursor, limit=limit)
    return {"profiles": [profile_out(p) for p in rows], "next_cursor": next_cursor}

