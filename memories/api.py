"""JSON API under /api/v1/ (django-ninja; OpenAPI at /api/v1/openapi.json, docs at /api/v1/docs).

Thin: parse and check the request shape, call a service or selector, shape the reply.
Errors are ``{"error": {"code", "message", "field"}}`` with 400/401/403/404/409/413.
"""

import copy
import datetime as dt
import json
import logging

from django.http import HttpRequest
from ninja import NinjaAPI, Schema, Status
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import ConfigDict, Field

from memories import access, backup, health, jobs, policy, services, session_store, sessions, store
from memories.audit import audit_feed
from memories.errors import InvalidInput, NotFound, PermissionDenied, ServiceError
from memories.index import fields as index_fields
from memories.models import Memory, RankingProfile, Session
from memories.profiles import profile_resolve
from memories.roles import require_role
from memories.search import memory_search
from memories.tokens import token_lookup
from memories.validation import (
    MEMORY_ID_RE,
    clean_identifier,
    parse_iso_datetime,
)

log = logging.getLogger(__name__)


class BearerAuth(HttpBearer):
    def authenticate(self, request, token):
        row = token_lookup(token)
        if row is None:
            return None
        request.user = copy.copy(row.user)  # the cached row is shared by threads
        request.token_namespaces = row.namespaces
        return request.user


# Text no database can store is refused before any view runs, by
# memory_console.middleware.ApiJsonErrorsMiddleware (validation.check_storable_text).
api = NinjaAPI(title="Memory Console API", version="1", auth=BearerAuth(), urls_namespace="api")


def _error(request, status: int, code: str, message: str, field=None, **extra):
    body = {"error": {"code": code, "message": message, "field": field, **extra}}
    return api.create_response(request, body, status=status)


@api.exception_handler(ServiceError)
def _service_error(request, exc: ServiceError):
    return api.create_response(request, exc.as_dict(), status=exc.status)


@api.exception_handler(store.RedisError)
def _redis_error(request, exc):
    # Reads that need Redis (recall, readiness, health, hot windows) cannot answer without it;
    # writes never get here: they land in the database and are marked for resync.
    return _error(request, 503, "unavailable", "Redis is unreachable; try again shortly")


@api.exception_handler(ValidationError)
def _validation_error(request, exc: ValidationError):
    first = exc.errors[0] if exc.errors else {}
    loc = [str(p) for p in first.get("loc", []) if p not in ("body", "payload", "query", "path")]
    field = ".".join(loc) or None
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        message = f"unknown field {field!r}"
    elif kind == "missing":
        message = f"{field} is required"
    else:
        message = f"{field}: {first.get('msg', 'invalid value')}" if field else first.get(
            "msg", "invalid request")
    return _error(request, 400, "invalid", message, field)


@api.exception_handler(AuthenticationError)
def _auth_error(request, exc):
    return _error(request, 401, "unauthorized", "missing or invalid bearer token")


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    code = {400: "invalid", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code,
                                                                              "error")
    return _error(request, exc.status_code, code, str(exc))


class Strict(Schema):
    model_config = ConfigDict(extra="forbid")


class MemoryIn(Strict):
    user_id: str
    content: str
    conversation_id: str | None = None
    type: str = "long_term"
    importance: float | None = None
    tags: list[str] | None = None
    metadata: dict | None = None
    source: str = ""
    author: str = ""
    keywords: list[str] | None = None
    ttl_seconds: int | None = None
    created_at: str | None = None
    context: str = ""


class MemoryPatch(Strict):
    content: str | None = None
    importance: float | None = None
    tags: list[str] | None = None
    type: str | None = None
    metadata: dict | None = None
    reason: str = Field(default="", max_length=1000)
    version: int | None = None


class ReasonIn(Strict):
    reason: str = Field(default="", max_length=1000)


class RollbackIn(Strict):
    version: int
    reason: str = Field(max_length=1000)


class RecallIn(Strict):
    user_id: str
    query: str = Field(max_length=4096)
    conversation_id: str | None = None
    limit: int = Field(default=5, ge=1, le=100)
    types: list[str] | None = None
    profile: str | None = None
    match_mode: str | None = None


class AnalyzeIn(Strict):
    text: str = Field(max_length=65536)
    profile: str | None = None


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value else None


def memory_out(memory: Memory, **extra) -> dict:
    """The API shape of a memory: every model field, datetimes as ISO 8601."""
    return {
        "memory_id": memory.memory_id, "user_id": memory.user_id,
        "conversation_id": memory.conversation_id, "type": memory.type,
        "content": memory.content, "context": memory.context, "keywords": memory.keywords,
        "tags": memory.tags,
        "importance": memory.importance, "access_count": memory.access_count,
        "accessed_at": _iso(memory.accessed_at), "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at), "expire_at": _iso(memory.expire_at),
        "source": memory.source, "author": memory.author, "metadata": memory.metadata,
        "content_hash": memory.content_hash, "version": memory.version,
        "deleted_at": _iso(memory.deleted_at), "deleted_by": memory.deleted_by, **extra,
    }


def _with_warning(memory: Memory, **extra) -> dict:
    """A write that reached the database while Redis was down says so (``sync_memory`` set
    ``needs_resync`` on the instance after the commit)."""
    if memory.needs_resync:
        extra["warning"] = "index_pending"
    return memory_out(memory, **extra)


def allowed_namespace(request, user_id: str) -> bool:
    """Whether the request's token may touch namespace ``user_id`` (an empty restriction
    list, or a console session, allows every namespace the role allows)."""
    restricted = getattr(request, "token_namespaces", None)
    return not restricted or user_id in restricted


def require_namespace(request, user_id: str | None) -> None:
    """Raise PermissionDenied (403) for a namespace outside the token's restriction; a
    restricted token may not act on every namespace at once (``user_id`` None)."""
    if user_id is None and getattr(request, "token_namespaces", None):
        raise PermissionDenied("this token is restricted to some namespaces; name one",
                               field="user_id")
    if user_id is not None and not allowed_namespace(request, user_id):
        raise PermissionDenied(f"this token may not access namespace {user_id!r}",
                               field="user_id")


def _memory_or_404(request, memory_id: str) -> Memory:
    """The memory, or NotFound, also for one outside the token's namespaces (so a
    restricted token cannot even learn that it exists)."""
    if not MEMORY_ID_RE.match(memory_id):
        raise NotFound(f"memory {memory_id!r} not found", field="memory_id")
    memory = Memory.objects.filter(memory_id=memory_id).first()
    if memory is None or not allowed_namespace(request, memory.user_id):
        raise NotFound(f"memory {memory_id} not found", field="memory_id")
    return memory


@api.post("/memories", response={200: dict, 201: dict}, tags=["memories"])
def create_memory(request: HttpRequest, payload: MemoryIn):
    """Remember one memory. 201 with the memory; 200 + ``deduplicated`` for a duplicate."""
    require_role(request.user, "editor")
    require_namespace(request, payload.user_id)
    fields = payload.model_dump()
    created_at = fields.pop("created_at")
    if created_at is not None:
        fields["created_at"] = parse_iso_datetime(created_at, "created_at")
    memory, dup = services.memory_create(actor=request.user, **fields)
    if dup:
        return Status(200, memory_out(memory, deduplicated=True))
    return Status(201, _with_warning(memory, deduplicated=False))


class BulkIn(Strict):
    memory_ids: list[str] = Field(max_length=500)
    action: str
    importance: float | None = None
    reason: str = Field(default="", max_length=1000)


# Declared before /memories/{memory_id}: routes match in order.
@api.post("/memories/bulk", response=dict, tags=["memories"])
def bulk(request, payload: BulkIn):
    """Change importance of, forget or restore several memories; each gets its own version."""
    require_role(request.user, "editor")
    for memory_id in payload.memory_ids:
        _memory_or_404(request, memory_id)
    done = services.memory_bulk(actor=request.user, **payload.model_dump())
    return {"memories": [memory_out(m) for m in done]}


@api.get("/memories/{memory_id}", response=dict, tags=["memories"])
def get_memory(request, memory_id: str):
    require_role(request.user, "viewer")
    return memory_out(access.with_hits_folded(_memory_or_404(request, memory_id)))


@api.patch("/memories/{memory_id}", response=dict, tags=["memories"])
def patch_memory(request, memory_id: str, payload: MemoryPatch):
    require_role(request.user, "editor")
    _memory_or_404(request, memory_id)
    data = payload.model_dump(exclude_unset=True)
    memory = services.memory_update(
        memory_id=memory_id, actor=request.user, reason=data.pop("reason", ""),
        expected_version=data.pop("version", None), **data)
    return _with_warning(memory)


@api.delete("/memories/{memory_id}", response={204: None}, tags=["memories"])
def delete_memory(request, memory_id: str, reason: str = "", purge: int = 0):
    """Forget (soft delete). ``?purge=1`` (admin) is a hard delete, audit record kept."""
    if purge:
        require_role(request.user, "admin")
        _memory_or_404(request, memory_id)
        services.memory_purge(memory_id=memory_id, actor=request.user, reason=reason)
        return Status(204, None)
    require_role(request.user, "editor")
    _memory_or_404(request, memory_id)
    services.memory_forget(memory_id=memory_id, actor=request.user, reason=reason)
    return Status(204, None)


@api.post("/memories/{memory_id}/restore", response=dict, tags=["memories"])
def restore_memory(request, memory_id: str, payload: ReasonIn | None = None):
    require_role(request.user, "editor")
    _memory_or_404(request, memory_id)
    memory = services.memory_restore(memory_id=memory_id, actor=request.user,
                                     reason=payload.reason if payload else "")
    return _with_warning(memory)


@api.post("/memories/{memory_id}/rollback", response=dict, tags=["memories"])
def rollback_memory(request, memory_id: str, payload: RollbackIn):
    require_role(request.user, "admin")
    _memory_or_404(request, memory_id)
    memory = services.memory_rollback(memory_id=memory_id, version=payload.version,
                                      actor=request.user, reason=payload.reason)
    return _with_warning(memory)


@api.post("/memories/{memory_id}/promote", response={200: dict, 201: dict}, tags=["memories"])
def promote_memory(request, memory_id: str, payload: ReasonIn | None = None):
    """A working or short-term memory → user-wide long-term (201; 200 + deduplicated)."""
    require_role(request.user, "editor")
    _memory_or_404(request, memory_id)
    memory, dup = services.memory_promote(memory_id=memory_id, actor=request.user,
                                          reason=payload.reason if payload else "")
    return Status(200 if dup else 201, memory_out(memory, deduplicated=dup))


@api.get("/memories/{memory_id}/history", response=dict, tags=["memories"])
def memory_history(request, memory_id: str):
    """Every version, oldest first."""
    require_role(request.user, "viewer")
    memory = _memory_or_404(request, memory_id)
    versions = [
        {"version": h.version, "kind": h.kind, "content": h.content,
         "importance": h.importance, "tags": h.tags, "type": h.type,
         "changed_by": h.changed_by, "reason": h.history_change_reason or "",
         "at": h.history_date.isoformat(), "forgotten": h.deleted_at is not None}
        for h in memory.history.order_by("history_date", "history_id")
    ]
    return {"versions": versions}


@api.get("/memories/{memory_id}/ready", response=dict, tags=["memories"])
def memory_ready(request, memory_id: str):
    """Whether Redis holds this memory's current version (``indexed_at`` epoch seconds)."""
    require_role(request.user, "viewer")
    memory = _memory_or_404(request, memory_id)
    raw = store.get_client().hmget(store.key(memory.user_id, "m", memory_id),
                                   ["version", "indexed_at"])
    version, indexed_at = (store.text(v) for v in raw)
    ready = memory.deleted_at is None and version == str(memory.version)
    return {"ready": ready, "indexed_at": float(indexed_at) if ready and indexed_at else None}


@api.post("/recall", response=dict, tags=["search"])
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
    try:
        found = memory_search(user_id=user_id, query=payload.query, limit=payload.limit,
                              conversation_id=conversation_id, types=payload.types,
                              profile=payload.profile, match_mode=payload.match_mode)
    except store.RedisError:
        return _error(request, 503, "unavailable", "the search index (Redis) is unreachable")
    try:
        access.access_record(user_id=user_id, memory_ids=[h.memory_id for h in found.results])
    except store.RedisError as exc:  # the results stand; only these hits go uncounted
        log.warning("recall hits not counted: %s", type(exc).__name__)
    return {
        "results": [
            {"memory_id": h.memory_id, "content": h.content, "type": h.type,
             "version": h.version, "score": h.score, "metadata": h.metadata,
             "created_at": dt.datetime.fromtimestamp(h.created_at, dt.UTC).isoformat(),
             "importance": h.importance, "conversation_id": h.conversation_id,
             "explain": {"bm25": h.explain.bm25, "relevance": h.explain.relevance,
                         "recency": h.explain.recency, "importance": h.explain.importance,
                         "terms": h.explain.terms, "weights": h.explain.weights,
                         "context_terms": h.explain.context_terms}}
            for h in found.results
        ],
        "match_mode_used": found.match_mode_used,
        "profile": found.profile,
        "took_ms": found.took_ms,
    }


@api.post("/analyze", response=dict, tags=["search"])
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
        "is_default",
        "builtin")}


@api.get("/profiles", response=dict, tags=["profiles"])
def list_profiles(request):
    require_role(request.user, "viewer")
    return {"profiles": [profile_out(p) for p in RankingProfile.objects.all()]}


class ReindexIn(Strict):
    user_id: str | None = None


@api.post("/reindex", response={202: dict}, tags=["index"])
def start_reindex(request, payload: ReindexIn | None = None):
    """Rebuild the index (one namespace or all) in the background: 202 ``{"job_id"}``."""
    require_role(request.user, "admin")
    user_id = clean_identifier(payload.user_id if payload else None, "user_id", required=False)
    require_namespace(request, user_id)
    job_id = jobs.enqueue(jobs.reindex_job, user_id)
    services.audit_record(actor=request.user, action="reindex", target=user_id or "*",
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


@api.post("/index/reconcile", response={202: dict}, tags=["index"])
def start_reconcile(request):
    """Repair drifted memories in the background: 202 ``{"job_id"}``."""
    require_role(request.user, "admin")
    require_namespace(request, None)
    job_id = jobs.enqueue(jobs.reconcile_job)
    services.audit_record(actor=request.user, action="reconcile", target="*",
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


@api.get("/jobs/{job_id}", response=dict, tags=["index"])
def get_job(request, job_id: str):
    require_role(request.user, "viewer")
    status = jobs.job_status(job_id)
    if status is None:
        raise NotFound(f"job {job_id!r} not found", field="job_id")
    return status


@api.get("/index/health", response=dict, tags=["index"])
def index_health(request):
    """Database vs Redis: counts, live drift, statistics, Redis memory, queues, failures."""
    require_role(request.user, "viewer")
    require_namespace(request, None)
    return health.index_health()


@api.get("/audit", response=dict, tags=["audit"])
def audit(request, actor: str = "", action: str = "", target: str = "", since: str = "",
          limit: int = 100):
    """Every change and admin action, newest first: ``{"events": [{"at", "actor", "action",
    "target", "reason"}]}``."""
    require_role(request.user, "viewer")
    require_namespace(request, None)
    when = None
    if since:
        when = parse_iso_datetime(since, "since")
    if not 1 <= limit <= 1000:
        raise InvalidInput("limit must be 1..1000", field="limit")
    events = audit_feed(actor=actor, action=action, target=target, since=when, limit=limit)
    return {"events": [e.as_dict() for e in events]}


@api.get("/export", response=dict, tags=["backup"])
def export(request, user_id: str):
    """One namespace as a versioned JSON document (everything: the export job/command)."""
    require_role(request.user, "admin")
    user_id = clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    return backup.export_memories(user_id=user_id)


@api.post("/import", response=dict, tags=["backup"])
def import_(request, mode: str = "merge"):
    """An export document in the body; ``?mode=replace`` swaps the namespace for it."""
    require_role(request.user, "admin")
    try:
        doc = json.loads(request.body or b"null")
    except ValueError:
        raise InvalidInput("the body must be an export document (JSON)", field=None) from None
    if isinstance(doc, dict) and isinstance(doc.get("memories"), list):
        for item in doc["memories"]:
            if isinstance(item, dict) and isinstance(item.get("user_id"), str):
                require_namespace(request, item["user_id"])
    return backup.import_memories(doc=doc, mode=mode, actor=request.user)


class PolicyIn(Strict):
    user_id: str
    dry_run: bool = False


@api.post("/cleanup", response={200: dict, 202: dict}, tags=["jobs"])
def cleanup(request, payload: PolicyIn):
    """Forgetting policy: the plan (dry run, 200) or a job applying it (202)."""
    require_role(request.user, "admin")
    user_id = clean_identifier(payload.user_id, "user_id")
    require_namespace(request, user_id)
    if payload.dry_run:
        return Status(200, policy.cleanup_plan(user_id=user_id).as_dict())
    job_id = jobs.enqueue(jobs.cleanup_job, user_id, queue="default")
    services.audit_record(actor=request.user, action="cleanup", target=user_id,
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


@api.post("/consolidate", response={200: dict, 202: dict}, tags=["jobs"])
def consolidate(request, payload: PolicyIn):
    """Consolidation: the groups (dry run, 200) or a job merging them (202)."""
    require_role(request.user, "admin")
    user_id = clean_identifier(payload.user_id, "user_id")
    require_namespace(request, user_id)
    if payload.dry_run:
        return Status(200, {"groups": policy.consolidation_plan(user_id=user_id)})
    job_id = jobs.enqueue(jobs.consolidate_job, user_id, queue="default")
    services.audit_record(actor=request.user, action="consolidate", target=user_id,
                          data={"job_id": job_id})
    return Status(202, {"job_id": job_id})


class SessionIn(Strict):
    user_id: str
    session_id: str | None = None
    agent_id: str = ""
    ttl_seconds: int | None = None
    system_prompt: str = Field(default="", max_length=65536)
    metadata: dict | None = None


class MessageIn(Strict):
    role: str
    content: str = Field(max_length=65536)


class MessagesIn(Strict):
    role: str | None = None
    content: str | None = Field(default=None, max_length=65536)
    messages: list[MessageIn] | None = Field(default=None, max_length=1000)


def _session_or_404(request, session_id: str) -> Session:
    session = Session.objects.filter(session_id=session_id).first()
    if session is None or not allowed_namespace(request, session.user_id):
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    return session


def session_out(session: Session) -> dict:
    try:
        hot = session_store.is_hot(session)
        ttl = store.get_client().ttl(session_store.keys(session)[0]) if hot else None
    except store.RedisError:
        hot, ttl = False, None
    return {"session_id": session.session_id, "user_id": session.user_id,
            "agent_id": session.agent_id, "hot": hot, "ttl": ttl,
            "total": session.messages.count(), "summary": session.summary,
            "metadata": session.metadata, "created_at": session.created_at.isoformat(),
            "updated_at": session.updated_at.isoformat()}


@api.post("/sessions", response={201: dict}, tags=["sessions"])
def create_session(request, payload: SessionIn):
    require_role(request.user, "editor")
    require_namespace(request, payload.user_id)
    session = sessions.session_create(**payload.model_dump())
    return Status(201, session_out(session))


@api.get("/sessions", response=dict, tags=["sessions"])
def list_sessions(request, user_id: str):
    require_role(request.user, "viewer")
    clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    rows = Session.objects.filter(user_id=user_id).order_by("-updated_at")[:200]
    return {"sessions": [{"session_id": s.session_id, "agent_id": s.agent_id,
                          "updated_at": s.updated_at.isoformat()} for s in rows]}


@api.get("/sessions/{session_id}", response=dict, tags=["sessions"])
def get_session(request, session_id: str):
    require_role(request.user, "viewer")
    return session_out(_session_or_404(request, session_id))


@api.delete("/sessions/{session_id}", response={204: None}, tags=["sessions"])
def delete_session(request, session_id: str):
    require_role(request.user, "editor")
    _session_or_404(request, session_id)
    sessions.session_delete(session_id=session_id)
    return Status(204, None)


@api.post("/sessions/{session_id}/messages", response={201: dict}, tags=["sessions"])
def append_messages(request, session_id: str, payload: MessagesIn):
    """One message ``{"role", "content"}`` or ``{"messages": [...]}``; 201 ``{"length"}``."""
    require_role(request.user, "editor")
    _session_or_404(request, session_id)
    if payload.messages is not None:
        if payload.role is not None or payload.content is not None:
            raise InvalidInput("send either role + content or messages", field="messages")
        items = [m.model_dump() for m in payload.messages]
    elif payload.role is not None and payload.content is not None:
        items = [{"role": payload.role, "content": payload.content}]
    else:
        raise InvalidInput("role and content are required", field="content")
    if not items:
        raise InvalidInput("messages must not be empty", field="messages")
    length = sessions.session_append(session_id=session_id, messages=items)
    return Status(201, {"length": length})


@api.post("/sessions/{session_id}/messages/{seq}/promote", response={200: dict, 201: dict},
          tags=["sessions"])
def promote_message(request, session_id: str, seq: int, payload: ReasonIn | None = None):
    """A session message → user-wide long-term memory (201; 200 + deduplicated)."""
    require_role(request.user, "editor")
    _session_or_404(request, session_id)
    memory, dup = services.message_promote(session_id=session_id, seq=seq, actor=request.user,
                                           reason=payload.reason if payload else "")
    return Status(200 if dup else 201, memory_out(memory, deduplicated=dup))


@api.get("/sessions/{session_id}/context", response=dict, tags=["sessions"])
def session_context(request, session_id: str, last: int = 20, max_tokens: int | None = None,
                    at: str | None = None):
    """The summary and the newest ``last`` messages, oldest first; ``at`` for time travel."""
    require_role(request.user, "viewer")
    _session_or_404(request, session_id)
    if not 1 <= last <= 1000:
        raise InvalidInput("last must be 1..1000", field="last")
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInput("max_tokens must be at least 1", field="max_tokens")
    when = None
    if at is not None:
        when = parse_iso_datetime(at, "at")
    return sessions.session_context(session_id=session_id, last=last, max_tokens=max_tokens,
                                    at=when)

from memories.api_lab import router as lab_router  # noqa: E402

api.add_router("/", lab_router)
