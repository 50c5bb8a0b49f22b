"""The sync bodies of the MCP tools and resources: ``body(caller, **arguments) -> dict``.

Each does what its REST view does, with the API's own helpers: ``require_role`` for the
role, ``require_namespace`` / the memory and session lookups that answer 404 outside the
token's namespaces, the API's request schemas (``MemoryIn``, ``RecallIn`` ...) for
validation, then one service (writes) or selector (reads), and the API's output shapes.
Errors are the services' own (``memories.errors``); ``runner`` maps them to MCP.
"""

from accounts.roles import require_role
from api.conflicts import conflict_out, conflict_page
from api.core import ReasonIn, iso_or_none, require_agent, require_namespace
from api.filters import parse_filters
from api.lookups import conflict_or_404, memory_or_404, recall_or_404, session_or_404
from api.memories import (
    InvalidateIn,
    MemoryIn,
    MemoryPatch,
    RevalidateIn,
    create_inferred,
    memories_out,
    memory_out,
)
from api.search import RecallIn, hit_out, recall_filters
from api.sessions import ExtractIn, MessagesIn, SessionIn, SummariseIn, session_out
from integrations.mcp.caller import user_id_or_default
from integrations.metrics.registry import count_redis_error
from memories import access, listing, services
from memories.errors import InvalidInput
from memories.models import Memory
from memories.validation import clean_identifier, parse_iso_datetime
from recalls.act import recall_traced
from recalls.api import FeedbackIn, feedback_out
from recalls.feedback import feedback_give
from sessions import extract as session_extract
from sessions import services as sessions
from sessions.promote import message_promote


def _written(memory: Memory, **extra) -> dict:
    """A write's answer; one that reached the database while Redis was down says so (as the
    REST API's ``_with_warning``)."""
    if memory.needs_resync:
        count_redis_error("mirror")
        extra.setdefault("warning", "index_pending")
    return memory_out(memory, **extra)


def add_memory(caller, **args) -> dict:
    require_role(caller.user, "editor")
    args["user_id"] = user_id_or_default(caller, args.get("user_id"))
    require_namespace(caller, args["user_id"])
    require_agent(caller, args.get("agent_id"))
    fields = MemoryIn.model_validate(args).model_dump()
    for name in ("created_at", "valid_from"):
        value = fields.pop(name)
        if value is not None:
            fields[name] = parse_iso_datetime(value, name)
    if fields.pop("infer"):
        return create_inferred(caller.user, fields)
    memory, dup = services.memory_create(actor=caller.user, **fields)
    return _written(memory, deduplicated=dup)


def _explain_summary(explain: dict) -> dict:
    """REST's explain (``api.search.hit_out``) cut to the score's parts, the (at most 5)
    strongest terms and the validity note."""
    top = sorted(explain["terms"].items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return {"bm25": explain["bm25"], "relevance": explain["relevance"],
            "recency": explain["recency"], "importance": explain["importance"],
            "top_terms": dict(top), "validity": explain["validity"]}


def _hit_summary(hit) -> dict:
    """A recall result as REST answers it (``api.search.hit_out``), explain summarised."""
    out = hit_out(hit)
    out["explain"] = _explain_summary(out["explain"])
    return out


def search_memories(caller, **args) -> dict:
    require_role(caller.user, "viewer")
    args["user_id"] = user_id_or_default(caller, args.get("user_id"))
    payload = RecallIn.model_validate(args)
    user_id = clean_identifier(payload.user_id, "user_id")
    require_namespace(caller, user_id)
    conversation_id = clean_identifier(payload.conversation_id, "conversation_id",
                                       required=False)
    filters = recall_filters(caller, payload)
    found, recall_id = recall_traced(
        actor=caller.user.get_username(), interface="mcp", token_id=caller.token_pk,
        user_id=user_id,
        query=payload.query, limit=payload.limit, conversation_id=conversation_id,
        types=payload.types, profile=payload.profile, match_mode=payload.match_mode,
        include_superseded=payload.include_superseded, **filters.search_args())
    return {
        "recall_id": recall_id,
        "results": [_hit_summary(h) for h in found.results],
        "match_mode_used": found.match_mode_used, "profile": found.profile,
        "took_ms": found.took_ms,
    }


def get_memory(caller, *, memory_id: str) -> dict:
    require_role(caller.user, "viewer")
    return memory_out(access.with_hits_folded(memory_or_404(caller, memory_id)))


def update_memory(caller, *, memory_id: str, **args) -> dict:
    require_role(caller.user, "editor")
    memory_or_404(caller, memory_id)
    data = MemoryPatch.model_validate(args).model_dump(exclude_unset=True)
    if data.get("valid_from") is not None:
        data["valid_from"] = parse_iso_datetime(data["valid_from"], "valid_from")
    memory = services.memory_update(
        memory_id=memory_id, actor=caller.user, reason=data.pop("reason", ""),
        expected_version=data.pop("version", None), **data)
    return _written(memory)


def delete_memory(caller, *, memory_id: str, reason: str = "") -> dict:
    require_role(caller.user, "editor")
    memory_or_404(caller, memory_id)
    ReasonIn.model_validate({"reason": reason})
    services.memory_forget(memory_id=memory_id, actor=caller.user, reason=reason)
    memory = Memory.objects.get(memory_id=memory_id)
    return {"memory_id": memory_id, "forgotten": memory.deleted_at is not None,
            "deleted_at": iso_or_none(memory.deleted_at)}


def invalidate_memory(caller, *, memory_id: str, **args) -> dict:
    """As ``POST /memories/{id}/invalidate``."""
    require_role(caller.user, "editor")
    memory_or_404(caller, memory_id)
    payload = InvalidateIn.model_validate(args)
    until = (parse_iso_datetime(payload.valid_until, "valid_until")
             if payload.valid_until is not None else None)
    return _written(services.memory_invalidate(memory_id=memory_id, actor=caller.user,
                                               reason=payload.reason, valid_until=until))


def revalidate_memory(caller, *, memory_id: str, **args) -> dict:
    """As ``POST /memories/{id}/revalidate``."""
    require_role(caller.user, "editor")
    memory_or_404(caller, memory_id)
    payload = RevalidateIn.model_validate(args)
    return _written(services.memory_revalidate(memory_id=memory_id, actor=caller.user,
                                               reason=payload.reason))


def list_conflicts(caller, *, user_id=None, status: str = "open", cursor=None,
                   limit=None) -> dict:
    """As ``GET /conflicts`` (the same reader: ``api.conflicts.conflict_page``)."""
    return conflict_page(caller, user_id=user_id, status=status, cursor=cursor, limit=limit)


def resolve_conflict(caller, *, conflict_id: int, accept: bool, reason: str = "") -> dict:
    """As ``POST /conflicts/{id}/accept`` (accept true) or ``/reject``."""
    require_role(caller.user, "editor")
    ReasonIn.model_validate({"reason": reason})
    conflict_or_404(caller, conflict_id)
    decide = services.conflict_accept if accept else services.conflict_reject
    return conflict_out(decide(conflict_id=conflict_id, actor=caller.user, reason=reason))


def promote(caller, *, memory_id=None, session_id=None, seq=None, reason: str = "",
            content=None, type=None, importance=None) -> dict:
    """As ``POST /memories/{id}/promote`` or ``/sessions/{id}/messages/{seq}/promote`` (whose
    edits ``content``, ``type`` and ``importance`` only a session message takes)."""
    require_role(caller.user, "editor")
    ReasonIn.model_validate({"reason": reason})
    edits = {"content": content, "type": type, "importance": importance}
    if memory_id is not None:
        if session_id is not None or seq is not None:
            raise InvalidInput("give either memory_id or session_id + seq", field="memory_id")
        edited = next((name for name, value in edits.items() if value is not None), None)
        if edited:
            raise InvalidInput(f"{edited} edits a session message only", field=edited)
        memory_or_404(caller, memory_id)
        memory, dup = services.memory_promote(memory_id=memory_id, actor=caller.user,
                                              reason=reason)
    elif session_id is not None and seq is not None:
        session_or_404(caller, session_id)
        memory, dup = message_promote(session_id=session_id, seq=seq, actor=caller.user,
                                      reason=reason, **edits)
    else:
        raise InvalidInput("memory_id, or session_id and seq, is required", field="memory_id")
    return _written(memory, deduplicated=dup)


def list_memories(caller, *, user_id=None, conversation_id=None, type=None,
                  include_forgotten: bool = False, metadata=None, cursor=None,
                  limit: int = 20, **filters) -> dict:
    """As ``GET /api/v1/memories`` (the same selector, cursors, limits and filters:
    ``api.filters``)."""
    require_role(caller.user, "viewer")
    user_id = clean_identifier(user_id_or_default(caller, user_id), "user_id")
    require_namespace(caller, user_id)
    if conversation_id:
        conversation_id = clean_identifier(conversation_id, "conversation_id")
    checked = parse_filters(caller, metadata=metadata, **filters)
    rows, next_cursor = listing.memory_page(
        user_id=user_id, conversation_id=conversation_id, type=type,
        include_forgotten=include_forgotten, cursor=cursor, limit=limit,
        **checked.list_args())
    return {"memories": memories_out(rows), "next_cursor": next_cursor}


def create_session(caller, **args) -> dict:
    require_role(caller.user, "editor")
    args["user_id"] = user_id_or_default(caller, args.get("user_id"))
    require_namespace(caller, args["user_id"])
    require_agent(caller, args.get("agent_id"))
    payload = SessionIn.model_validate(args)
    return session_out(sessions.session_create(**payload.model_dump()))


def append_messages(caller, *, session_id: str, **args) -> dict:
    require_role(caller.user, "editor")
    session_or_404(caller, session_id)
    payload = MessagesIn.model_validate(args)
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
    return {"length": sessions.session_append(session_id=session_id, messages=items)}


def get_context(caller, *, session_id: str, last: int = 20, max_tokens=None,
                at=None) -> dict:
    require_role(caller.user, "viewer")
    session_or_404(caller, session_id)
    if not 1 <= last <= 1000:
        raise InvalidInput("last must be 1..1000", field="last")
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInput("max_tokens must be at least 1", field="max_tokens")
    when = parse_iso_datetime(at, "at") if at is not None else None
    context = sessions.session_context(session_id=session_id, last=last,
                                       max_tokens=max_tokens, at=when)
    return {"summary": context["summary"], "summary_method": context["summary_method"],
            "messages": context["messages"], "total": context["total"]}


def summarise_session(caller, *, session_id: str, max_chars=None) -> dict:
    """As ``POST /sessions/{id}/summarise``: read-only, a viewer's."""
    require_role(caller.user, "viewer")
    session_or_404(caller, session_id)
    payload = SummariseIn.model_validate({"max_chars": max_chars})
    return sessions.session_summarise(session_id=session_id, max_chars=payload.max_chars)


def extract_memories(caller, *, session_id: str, dry_run: bool = True) -> dict:
    """As ``POST /sessions/{id}/extract``: a viewer's dry run, an editor's write."""
    payload = ExtractIn.model_validate({"dry_run": dry_run})
    require_role(caller.user, "viewer" if payload.dry_run else "editor")
    session_or_404(caller, session_id)
    return session_extract.session_extract(session_id=session_id, dry_run=payload.dry_run,
                                           actor=caller.user)


def recall_feedback(caller, *, recall_id: str, **args) -> dict:
    """As ``POST /recalls/{recall_id}/feedback``."""
    require_role(caller.user, "viewer")
    recall = recall_or_404(caller, recall_id)
    payload = FeedbackIn.model_validate(args)
    given, _created = feedback_give(
        recall=recall, memory_id=payload.memory_id, actor=caller.user.get_username(),
        grade=payload.grade, useful=payload.useful, note=payload.note)
    return feedback_out(given)
