"""Sessions (short-term conversations): list with filters and hot/cold state, one
transcript with its promote buttons and the memories that came from it, and warming a cold
session back into Redis."""

import datetime as dt
import logging

from django.contrib import messages
from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.pages import (
    bad_request,
    forbidden,
    paginate,
    redis_unavailable,
    render_page,
    role_required,
)
from memories import store
from memories.errors import NotFound, ServiceError
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.models import Memory
from sessions import promote as session_promote
from sessions import store as session_store
from sessions.forms import SessionFilterForm
from sessions.models import Session

log = logging.getLogger(__name__)

SESSION_MEMORIES = 50
HOT_FILTER_SCAN = 2000


def hot_states(sessions) -> dict[str, bool | None]:
    """``{session_id: hot}`` for a page of sessions in one pipelined round trip (EXISTS of
    each meta key, the key ``session_store.is_hot`` checks); None for all when Redis is down.
    """
    sessions = list(sessions)
    if not sessions:
        return {}
    try:
        pipe = store.get_client().pipeline(transaction=False)
        for s in sessions:
            pipe.exists(session_store.keys(s)[0])
        found = pipe.execute()
    except store.RedisError as exc:
        log.warning("session hot state unavailable: %s", type(exc).__name__)
        return dict.fromkeys((s.session_id for s in sessions), None)
    return {s.session_id: bool(n) for s, n in zip(sessions, found, strict=True)}


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def session_list(request):
    """Sessions, most recently active first; htmx gets the ``#session-rows`` fragment.

    Queries: one COUNT and one page (message counts are each session's ``last_seq``); Redis:
    one pipeline for hot/cold.
    """
    form = SessionFilterForm(request.GET)
    pager, hot = None, {}
    if form.is_valid():
        data = form.cleaned_data
        sessions = Session.objects.defer("system_prompt", "metadata")
        if data["user_id"]:
            sessions = sessions.filter(user_id=data["user_id"])
        if data["agent_id"]:
            sessions = sessions.filter(agent_id=data["agent_id"])
        if data["active_since"]:
            start = dt.datetime.combine(data["active_since"], dt.time.min)
            sessions = sessions.filter(updated_at__gte=timezone.make_aware(start))
        sessions = sessions.order_by("-updated_at", "session_id")
        if data.get("state"):
            # Hot means "its keys are in Redis": known only there, so the newest
            # HOT_FILTER_SCAN candidates are checked in one pipeline and filtered here.
            candidates = list(sessions[:HOT_FILTER_SCAN])
            states = hot_states(candidates)
            want = data["state"] == "hot"
            sessions = [s for s in candidates if states.get(s.session_id) is want]
        pager = paginate(
            request,
            sessions,
            per_page=data["per_page"],
            params=form.params(),
            base=reverse("memories:memories-sessions"),
        )
        hot = hot_states(pager.page.object_list)
    return render_page(
        request,
        "memories/session_list.html",
        {
            "form": form,
            "pager": pager,
            "rows": [(s, hot.get(s.session_id)) for s in pager.page] if pager else [],
            "can_edit": has_role(request.user, "editor"),
        },
        partial="rows",
        status=200 if pager else 400,
    )


def _session_memories(session: Session) -> list[Memory]:
    """Memories of the session's user that came from it: scoped to it as their
    conversation, or promoted from one of its messages (``metadata.promoted_from``)."""
    return list(
        Memory.objects.filter(user_id=session.user_id)
        .filter(
            Q(conversation_id=session.session_id)
            | Q(metadata__promoted_from__session_id=session.session_id)
        )
        .defer("context", "keywords")
        .order_by("-created_at", "memory_id")[:SESSION_MEMORIES]
    )


@require_GET
@role_required("viewer")
def session_detail(request, session_id: str):
    """The whole transcript from the database (it outlives the Redis hot window), the
    session's memories and, per message, the memory it was promoted to (if any)."""
    session = get_object_or_404(Session, session_id=session_id)
    memories_ = _session_memories(session)
    promoted = {}
    for m in memories_:
        source = (m.metadata or {}).get("promoted_from")
        if isinstance(source, dict) and source.get("session_id") == session.session_id:
            promoted.setdefault(source.get("seq"), m)
    hot = hot_states([session]).get(session.session_id)
    return render_page(
        request,
        "memories/session_detail.html",
        {
            "session": session,
            "messages_": [(msg, promoted.get(msg.seq)) for msg in session.messages.order_by("seq")],
            "session_memories": memories_,
            "hot": hot,
            "can_edit": has_role(request.user, "editor"),
        },
    )


@require_POST
@role_required("editor")
def session_warm(request, session_id: str):
    """Load a cold session's newest window back into Redis from the database.

    htmx gets the refreshed hot/cold badge (``_session_state.html``); a plain browser the
    session page again, with a message.
    """
    session = get_object_or_404(Session, session_id=session_id)
    try:
        loaded = session_store.window_warm(session)
    except store.RedisError as exc:
        log.warning("session not warmed: %s", type(exc).__name__)
        return redis_unavailable(request)
    text = f"Session warmed: {loaded} message{'s' if loaded != 1 else ''} in the hot window."
    if request.htmx:
        return render_page(
            request,
            "memories/_session_state.html",
            {"session": session, "hot": True, "can_edit": True, "note": text},
        )
    messages.success(request, text)
    return redirect("memories:memories-session", session_id=session.session_id)


@require_POST
@role_required("editor")
def message_promote(request, session_id: str, seq: int):
    """One message → a user-wide long-term memory (``services.message_promote``,
    deduplicated). htmx gets the message's promote cell; a plain browser the session page."""
    session = get_object_or_404(Session, session_id=session_id)
    reason = request.POST.get("reason", "")
    if len(reason) > 500:
        return bad_request(request, "The reason takes at most 500 characters.")
    try:
        memory, deduplicated = session_promote.message_promote(
            session_id=session.session_id, seq=seq, actor=request.user, reason=reason
        )
    except ServicePermissionDenied as exc:
        return forbidden(request, exc.message)
    except NotFound as exc:
        raise Http404(exc.message) from None
    except ServiceError as exc:
        return bad_request(request, exc.message)
    if deduplicated:
        text = f"Message #{seq} was already a long-term memory: {memory.memory_id}."
    else:
        text = f"Message #{seq} promoted to {memory.memory_id}."
    if request.htmx:
        return render_page(
            request,
            "memories/_message_promoted.html",
            # The side panel of the session's memories is updated at once (out of band).
            {"memory": memory, "note": "already a memory:" if deduplicated else "promoted:",
             "session_memories": _session_memories(session), "oob_panel": True},
        )
    messages.success(request, text)
    return redirect(reverse("memories:memories-session", args=[session.session_id]) + f"#msg-{seq}")
