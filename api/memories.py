"""/memories: create, read, change, forget, restore, roll back, promote, history."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status
from pydantic import Field

from accounts.roles import require_role
from api.core import (
    ReasonIn,
    Strict,
    api,
    require_agent,
    require_namespace,
)
from api.filters import parse_filters
from api.lookups import memory_or_404
from api.memory_bodies import (
    InvalidateIn,
    MemoryIn,
    MemoryPatch,
    RevalidateIn,
    RollbackIn,
    memories_out,
    memory_out,
    pending_header,
    warned_out,
    write_answer,
)
from api.schemas import (
    METADATA_FILTER,
    ONE,
    READ,
    WRITE,
    HistoryOut,
    InferredOut,
    MemoriesOut,
    MemoryOut,
    MemoryPageOut,
    MemoryTypeName,
    NamespacePageOut,
    ReadyOut,
    errors,
    page_limit,
)
from memories import access, listing, services, store
from memories.errors import InvalidInput
from memories.models import MemoryType
from memories.validation import (
    clean_identifier,
    clean_text,
    parse_iso_datetime,
)

router = Router()
# ``GET /memories?tags=a&tags=b``: every tag given (a list parameter is a query one only
# when declared so).
TAGS_QUERY = Query(None, description="repeated: keep memories holding every tag given")


@router.post("/memories", response={200: MemoryOut, 201: MemoryOut | InferredOut,
                                    **errors(*WRITE, 404, 409)},
             tags=["memories"], exclude_unset=True)
def create_memory(request: HttpRequest, payload: MemoryIn):
    """Remember one memory. 201 with the memory; 200 + ``deduplicated`` for a duplicate."""
    require_role(request.user, "editor")
    require_namespace(request, payload.user_id)
    require_agent(request, payload.agent_id)
    fields = create_fields(payload)
    if fields.pop("infer"):
        return _create_inferred(request, fields)
    memory, dup = services.memory_create(actor=request.user, **fields)
    if dup:
        return Status(200, memory_out(memory, deduplicated=True))
    return write_answer(request, memory, 201, deduplicated=False)


def create_fields(payload: MemoryIn) -> dict:
    """``memory_create``'s keyword arguments from a create's body (and ``infer``), times
    parsed; raises InvalidInput naming a bad ``created_at`` or ``valid_from``."""
    fields = payload.model_dump()
    for name in ("created_at", "valid_from"):
        value = fields.pop(name)
        if value is not None:
            fields[name] = parse_iso_datetime(value, name)
    return fields


def _create_inferred(request, fields: dict):
    body = create_inferred(request.user, fields)
    response = api.create_response(request, body, status=201)
    return pending_header(response, any(m.get("warning") for m in body["memories"]))


def create_inferred(actor, fields: dict) -> dict:
    """``infer``: the memories extracted from the text (``sessions.extract``), each written
    with the request's other fields (validation, dedup and supersession proposals as every
    write; all or nothing): ``{"memories": [...], "inferred": true, "method"}``
    (``deduplicated`` on each). REST and MCP answer it."""
    from sessions import extract

    fields = dict(fields)
    fields.pop("infer", None)
    if fields.pop("supersedes"):
        raise InvalidInput("supersedes cannot be combined with infer", field="supersedes")
    text = fields.pop("content")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("content must not be empty", field="content")
    if len(text) > settings.MEMORY_MAX_CONTENT_CHARS:
        raise InvalidInput(f"content over {settings.MEMORY_MAX_CONTENT_CHARS} characters",
                           field="content")
    clean_text(text, "content")
    supersession = fields.pop("supersession")
    fields.pop("keywords")  # the text's keywords are not each memory's
    metadata = fields.pop("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be an object", field="metadata")
    found, method = extract.text_candidates(text, at=fields.get("created_at"))
    items = [{**fields, "content": c.content, "type": c.type if fields["type"] == "long_term"
              else fields["type"],
              "metadata": {**metadata, "inferred": {"seqs": c.seqs, "method": method,
                                                    "confidence": round(c.confidence, 3)}}}
             for c in found]
    written = services.memory_create_many(items=items, actor=actor,
                                          supersession=supersession) if items else []
    return {"memories": [warned_out(m, deduplicated=dup) for m, dup in written],
            "inferred": True, "method": method}


class BulkIn(Strict):
    memory_ids: list[str] = Field(max_length=500)
    action: str
    importance: float | None = None
    reason: str = Field(default="", max_length=1000)


# Declared before /memories/{memory_id}: routes match in order.
@router.post("/memories/bulk", response={200: MemoriesOut, **errors(*WRITE, 404)},
             tags=["memories"], exclude_unset=True)
def bulk(request, payload: BulkIn):
    """Change importance of, forget or restore several memories; each gets its own version."""
    require_role(request.user, "editor")
    for memory_id in payload.memory_ids:
        memory_or_404(request, memory_id)
    done = services.memory_bulk(actor=request.user, **payload.model_dump())
    response = api.create_response(request, {"memories": [warned_out(m) for m in done]},
                                   status=200)
    return pending_header(response, any(m.needs_resync for m in done))


@router.get("/memories", response={200: MemoryPageOut, **errors(*READ)}, tags=["memories"],
            exclude_unset=True, openapi_extra=METADATA_FILTER)
def list_memories(request, user_id: str, conversation_id: str | None = None,
                  type: MemoryTypeName | None = None, include_forgotten: int = 0,
                  cursor: str | None = None,
                  limit: int = page_limit(100, listing.MAX_LIMIT),
                  since: str | None = None, until: str | None = None,
                  author: str | None = None, tags: list[str] | None = TAGS_QUERY,
                  agent_id: str | None = None, run_id: str | None = None,
                  now: str | None = None, as_of: str | None = None):
    """One namespace's memories, newest first: ``{"memories": [...], "next_cursor"}``.

    ``conversation_id=`` (empty) selects the user-wide memories; ``metadata.<path>=value``
    query parameters keep memories whose metadata holds that string at that dotted path.
    The filters recall takes (``api.filters``): ``since`` (inclusive) and ``until``
    (exclusive) ISO 8601 bounds of ``created_at``, ``author``, ``tags`` (repeated: every one
    held), ``agent_id``, ``run_id``; ``as_of`` or ``now`` keeps the facts valid at that
    moment (without either, every fact whatever its validity).
    ``access_count`` here may lag the last recalls by one fold (``GET /memories/{id}``
    folds first).
    """
    require_role(request.user, "viewer")
    user_id = clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    if conversation_id:
        conversation_id = clean_identifier(conversation_id, "conversation_id")
    if type is not None and type not in MemoryType.values:
        raise InvalidInput("type must be long_term, short_term or working", field="type")
    filters = parse_filters(
        request, since=since, until=until, now=now, as_of=as_of, author=author, tags=tags,
        agent_id=agent_id, run_id=run_id,
        metadata={k.removeprefix("metadata."): v for k, v in request.GET.items()
                  if k.startswith("metadata.")})
    rows, next_cursor = listing.memory_page(
        user_id=user_id, conversation_id=conversation_id, type=type,
        include_forgotten=bool(include_forgotten), cursor=cursor, limit=limit,
        **filters.list_args())
    return {"memories": memories_out(rows), "next_cursor": next_cursor}


@router.get("/namespaces", response={200: NamespacePageOut, **errors(*READ)}, tags=["memories"],
            exclude_unset=True)
def list_namespaces(request, user_id: str | None = None, cursor: str | None = None,
                    limit: int = page_limit(100, listing.MAX_LIMIT)):
    """Every (user_id, conversation_id) pair holding live memories, ordered by both
    (user-wide first): ``{"namespaces": [{"user_id", "conversation_id", "memories"}],
    "next_cursor"}``. A token restricted to namespaces sees only those; one restricted to
    agents counts only its agents' memories."""
    require_role(request.user, "viewer")
    allowed = getattr(request, "token_namespaces", None) or None
    if user_id is not None:
        user_id = clean_identifier(user_id, "user_id")
        require_namespace(request, user_id)
        allowed = [user_id]
    rows, next_cursor = listing.namespace_page(
        user_ids=allowed, agent_ids=getattr(request, "token_agents", None) or None,
        cursor=cursor, limit=limit)
    return {"namespaces": rows, "next_cursor": next_cursor}


@router.get("/memories/{memory_id}", response={200: MemoryOut, **errors(*ONE)}, tags=["memories"],
            exclude_unset=True)
def get_memory(request, memory_id: str):
    require_role(request.user, "viewer")
    return memory_out(access.with_hits_folded(memory_or_404(request, memory_id)))


@router.patch("/memories/{memory_id}", response={200: MemoryOut, **errors(*WRITE, 404, 409)},
              tags=["memories"], exclude_unset=True)
def patch_memory(request, memory_id: str, payload: MemoryPatch):
    require_role(request.user, "editor")
    memory_or_404(request, memory_id)
    data = payload.model_dump(exclude_unset=True)
    if data.get("valid_from") is not None:
        data["valid_from"] = parse_iso_datetime(data["valid_from"], "valid_from")
    memory = services.memory_update(
        memory_id=memory_id, actor=request.user, reason=data.pop("reason", ""),
        expected_version=data.pop("version", None), **data)
    return write_answer(request, memory)


@router.delete("/memories/{memory_id}", response={204: None, **errors(*ONE)}, tags=["memories"])
def delete_memory(request, memory_id: str, reason: str = "", purge: int = 0):
    """Forget (soft delete). ``?purge=1`` (admin) is a hard delete, audit record kept."""
    if purge:
        require_role(request.user, "admin")
        memory_or_404(request, memory_id)
        purged = services.memory_purge(memory_id=memory_id, actor=request.user, reason=reason)
        return pending_header(HttpResponse(status=204), purged.index_pending)
    require_role(request.user, "editor")
    memory_or_404(request, memory_id)
    memory = services.memory_forget(memory_id=memory_id, actor=request.user, reason=reason)
    return pending_header(HttpResponse(status=204), memory.needs_resync)


@router.post("/memories/{memory_id}/restore", response={200: MemoryOut, **errors(*WRITE, 404)},
             tags=["memories"], exclude_unset=True)
def restore_memory(request, memory_id: str, payload: ReasonIn | None = None):
    require_role(request.user, "editor")
    memory_or_404(request, memory_id)
    memory = services.memory_restore(memory_id=memory_id, actor=request.user,
                                     reason=payload.reason if payload else "")
    return write_answer(request, memory)


@router.post("/memories/{memory_id}/invalidate",
             response={200: MemoryOut, **errors(*WRITE, 404, 409)}, tags=["memories"],
             exclude_unset=True)
def invalidate_memory(request, memory_id: str, payload: InvalidateIn):
    """End the memory's fact with no replacement ("no longer lives in Porto"): it leaves
    recall from ``valid_until`` (default now) and stays readable, with a new version."""
    require_role(request.user, "editor")
    memory_or_404(request, memory_id)
    until = (parse_iso_datetime(payload.valid_until, "valid_until")
             if payload.valid_until is not None else None)
    memory = services.memory_invalidate(memory_id=memory_id, actor=request.user,
                                        reason=payload.reason, valid_until=until)
    return write_answer(request, memory)


@router.post("/memories/{memory_id}/revalidate",
             response={200: MemoryOut, **errors(*WRITE, 404, 409)}, tags=["memories"],
             exclude_unset=True)
def revalidate_memory(request, memory_id: str, payload: RevalidateIn):
    """Undo a supersession or an end: the fact holds again (a new version)."""
    require_role(request.user, "editor")
    memory_or_404(request, memory_id)
    memory = services.memory_revalidate(memory_id=memory_id, actor=request.user,
                                        reason=payload.reason)
    return write_answer(request, memory)


@router.post("/memories/{memory_id}/rollback", response={200: MemoryOut, **errors(*WRITE, 404)},
             tags=["memories"], exclude_unset=True)
def rollback_memory(request, memory_id: str, payload: RollbackIn):
    require_role(request.user, "admin")
    memory_or_404(request, memory_id)
    memory = services.memory_rollback(memory_id=memory_id, version=payload.version,
                                      actor=request.user, reason=payload.reason)
    return write_answer(request, memory)


@router.post("/memories/{memory_id}/promote",
             response={200: MemoryOut, 201: MemoryOut, **errors(*WRITE, 404, 409)},
             tags=["memories"], exclude_unset=True)
def promote_memory(request, memory_id: str, payload: ReasonIn | None = None):
    """A working or short-term memory → user-wide long-term (201; 200 + deduplicated)."""
    require_role(request.user, "editor")
    memory_or_404(request, memory_id)
    memory, dup = services.memory_promote(memory_id=memory_id, actor=request.user,
                                          reason=payload.reason if payload else "")
    if dup:
        return Status(200, memory_out(memory, deduplicated=True))
    return write_answer(request, memory, 201, deduplicated=False)


@router.get("/memories/{memory_id}/history", response={200: HistoryOut, **errors(*ONE)},
            tags=["memories"], exclude_unset=True)
def memory_history(request, memory_id: str):
    """Every version, oldest first."""
    require_role(request.user, "viewer")
    memory = memory_or_404(request, memory_id)
    versions = [
        {"version": h.version, "kind": h.kind, "content": h.content,
         "importance": h.importance, "tags": h.tags, "type": h.type,
         "changed_by": h.changed_by, "reason": h.history_change_reason or "",
         "at": h.history_date.isoformat(), "forgotten": h.deleted_at is not None}
        for h in memory.history.order_by("history_date", "history_id")
    ]
    return {"versions": versions}


@router.get("/memories/{memory_id}/ready", response={200: ReadyOut, **errors(*ONE, 503)},
            tags=["memories"], exclude_unset=True)
def memory_ready(request, memory_id: str):
    """Whether Redis holds this memory's current version (``indexed_at`` epoch seconds)."""
    require_role(request.user, "viewer")
    memory = memory_or_404(request, memory_id)
    raw = store.get_client().hmget(store.key(memory.user_id, "m", memory_id),
                                   ["version", "indexed_at"])
    version, indexed_at = (store.text(v) for v in raw)
    ready = memory.deleted_at is None and version == str(memory.version)
    return {"ready": ready, "indexed_at": float(indexed_at) if ready and indexed_at else None}

