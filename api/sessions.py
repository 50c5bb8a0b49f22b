"""/sessions: short-term conversations, their messages and context."""

import logging

from ninja import Router, Status
from pydantic import Field

from accounts.roles import require_role
from api.core import (
    ReasonIn,
    Strict,
    agent_scope,
    require_agent,
    require_namespace,
)
from api.lookups import session_or_404
from api.memories import memory_out
from api.pagination import MAX_LIMIT, cursor_page
from api.schemas import ONE, READ, WRITE, MemoryOut, MemoryTypeName, errors, page_limit
from api.session_schemas import (
    AppendOut,
    ContextOut,
    ExtractOut,
    MessageRole,
    SessionOut,
    SessionPageOut,
    SummaryOut,
)
from memories import store
from memories.errors import InvalidInput
from memories.validation import (
    clean_identifier,
    parse_iso_datetime,
)
from sessions import extract as session_extract
from sessions import promote as session_promote
from sessions import services as sessions
from sessions import store as session_store
from sessions.models import Session

log = logging.getLogger(__name__)


router = Router()


class PromoteIn(ReasonIn):
    content: str | None = None
    type: MemoryTypeName | None = None
    importance: float | None = None


class SessionIn(Strict):
    user_id: str
    session_id: str | None = None
    agent_id: str = ""
    # The agent's run; memories promoted or extracted from the session carry both.
    run_id: str = ""
    ttl_seconds: int | None = None
    system_prompt: str = Field(default="", max_length=65536)
    metadata: dict | None = None


class MessageIn(Strict):
    role: MessageRole
    content: str = Field(max_length=65536)
    at: str | None = None  # ISO 8601: when it was said (transcripts loaded after the fact)


class SummariseIn(Strict):
    max_chars: int | None = None  # 100..20000; default the rolling summary's 2000


class MessagesIn(Strict):
    role: MessageRole | None = None
    content: str | None = Field(default=None, max_length=65536)
    messages: list[MessageIn] | None = Field(default=None, max_length=1000)


def session_out(session: Session) -> dict:
    try:
        hot = session_store.is_hot(session)
        ttl = store.get_client().ttl(session_store.keys(session)[0]) if hot else None
    except store.RedisError:
        hot, ttl = False, None
    return {"session_id": session.session_id, "user_id": session.user_id,
            "agent_id": session.agent_id, "run_id": session.run_id, "hot": hot, "ttl": ttl,
            "total": session.messages.count(), "summary": session.summary,
            "summary_method": session.summary_method,
            "metadata": session.metadata, "created_at": session.created_at.isoformat(),
            "updated_at": session.updated_at.isoformat()}


@router.post("/sessions", response={201: SessionOut, **errors(*WRITE)}, tags=["sessions"])
def create_session(request, payload: SessionIn):
    require_role(request.user, "editor")
    require_namespace(request, payload.user_id)
    require_agent(request, payload.agent_id)
    session = sessions.session_create(**payload.model_dump())
    return Status(201, session_out(session))


@router.get("/sessions", response={200: SessionPageOut, **errors(*READ)}, tags=["sessions"])
def list_sessions(request, user_id: str, cursor: str | None = None,
                  limit: int = page_limit(100, MAX_LIMIT)):
    """A namespace's sessions, most recently updated first: ``{"sessions", "next_cursor"}``."""
    require_role(request.user, "viewer")
    clean_identifier(user_id, "user_id")
    require_namespace(request, user_id)
    rows = Session.objects.filter(user_id=user_id)
    if agents := agent_scope(request, None):  # a token restricted to agents: theirs only
        rows = rows.filter(agent_id__in=agents)
    rows, next_cursor = cursor_page(rows,
                                    order=("-updated_at", "-pk"), cursor=cursor, limit=limit)
    return {"sessions": [{"session_id": s.session_id, "agent_id": s.agent_id,
                          "updated_at": s.updated_at.isoformat()} for s in rows],
            "next_cursor": next_cursor}


@router.post("/sessions/{path:session_id}/messages",
             response={201: AppendOut, **errors(*WRITE, 404)}, tags=["sessions"])
def append_messages(request, session_id: str, payload: MessagesIn):
    """One message ``{"role", "content"}`` or ``{"messages": [...]}``; 201 ``{"length"}``."""
    require_role(request.user, "editor")
    session_or_404(request, session_id)
    if payload.messages is not None:
        if payload.role is not None or payload.content is not None:
            raise InvalidInput("send either role + content or messages", field="messages")
        items = [m.model_dump() for m in payload.messages]
        for n, item in enumerate(items):
            if item["at"] is not None:
                item["at"] = parse_iso_datetime(item["at"], f"messages[{n}].at")
    elif payload.role is not None and payload.content is not None:
        items = [{"role": payload.role, "content": payload.content}]
    else:
        raise InvalidInput("role and content are required", field="content")
    if not items:
        raise InvalidInput("messages must not be empty", field="messages")
    length = sessions.session_append(session_id=session_id, messages=items)
    return Status(201, {"length": length})


@router.post("/sessions/{path:session_id}/messages/{int:seq}/promote",
             response={200: MemoryOut, 201: MemoryOut, **errors(*WRITE, 404, 409)},
             tags=["sessions"], exclude_unset=True)
def promote_message(request, session_id: str, seq: int, payload: PromoteIn | None = None):
    """A session message → user-wide long-term memory (201; 200 + deduplicated); optional
    ``content``, ``type`` and ``importance`` edit it before it is written."""
    require_role(request.user, "editor")
    session_or_404(request, session_id)
    edits = payload.model_dump() if payload else {}
    memory, dup = session_promote.message_promote(session_id=session_id, seq=seq,
                                                  actor=request.user, **edits)
    return Status(200 if dup else 201, memory_out(memory, deduplicated=dup))


class ExtractIn(Strict):
    dry_run: bool = True


@router.post("/sessions/{path:session_id}/extract",
             response={200: ExtractOut, **errors(*WRITE, 404, 409)}, tags=["sessions"],
             exclude_unset=True)
def extract_memories(request, session_id: str, payload: ExtractIn | None = None):
    """The memories worth keeping from the session's messages: ``{"candidates": [{"content",
    "seqs", "type", "confidence"}], "method"}`` (viewer); ``dry_run: false`` writes them
    (editor) and adds ``"memory_ids"``."""
    dry_run = payload.dry_run if payload else True
    require_role(request.user, "viewer" if dry_run else "editor")
    session_or_404(request, session_id)
    return session_extract.session_extract(session_id=session_id, dry_run=dry_run,
                                           actor=request.user)


@router.get("/sessions/{path:session_id}/context", response={200: ContextOut, **errors(*ONE)},
            tags=["sessions"])
def session_context(request, session_id: str, last: int = 20, max_tokens: int | None = None,
                    at: str | None = None):
    """The summary and the newest ``last`` messages, oldest first; ``at`` for time travel."""
    require_role(request.user, "viewer")
    session_or_404(request, session_id)
    if not 1 <= last <= 1000:
        raise InvalidInput("last must be 1..1000", field="last")
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInput("max_tokens must be at least 1", field="max_tokens")
    when = None
    if at is not None:
        when = parse_iso_datetime(at, "at")
    return sessions.session_context(session_id=session_id, last=last, max_tokens=max_tokens,
                                    at=when)


@router.post("/sessions/{path:session_id}/summarise",
             response={200: SummaryOut, **errors(*WRITE, 404)}, tags=["sessions"])
def summarise_session(request, session_id: str, payload: SummariseIn | None = None):
    """The summary of the whole session now, ``{"summary", "method": "local"|"llm",
    "chars"}``, by the code the rolling fold uses; read-only (the session is not changed)."""
    require_role(request.user, "viewer")
    session_or_404(request, session_id)
    return sessions.session_summarise(session_id=session_id,
                                      max_chars=payload.max_chars if payload else None)


# Session ids may hold "/" (any 1-128 characters): the path converter takes it, and the
# routes with a suffix (messages, promote, context, summarise) come first, so an id that
# itself ends in one of those suffixes is shadowed by that route (docs/agent-developer.md,
# "Conventions").
@router.get("/sessions/{path:session_id}", response={200: SessionOut, **errors(*ONE)},
            tags=["sessions"])
def get_session(request, session_id: str):
    require_role(request.user, "viewer")
    return session_out(session_or_404(request, session_id))


@router.delete("/sessions/{path:session_id}", response={204: None, **errors(*ONE)},
              tags=["sessions"])
def delete_session(request, session_id: str):
    require_role(request.user, "editor")
    session_or_404(request, session_id)
    sessions.session_delete(session_id=session_id)
    return Status(204, None)
