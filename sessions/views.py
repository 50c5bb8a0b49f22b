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
from memories.services.create import content_hash
from sessions import extract as session_extraction
from sessions import promote as session_promote
from sessions import services as session_services
from sessions import store as session_store
from sessions.forms import CandidateForm, SessionAtForm, SessionFilterForm
from sessions.models import Session

log = logging.getLogger(__name__)

SESSION_MEMORIES = 50
HOT_FILTER_SCAN = 2000
TRAVEL_LAST = 50  # messages of the context shown as of a past moment
SUGGEST_PANEL = "sessions/_session_suggest.html"
SUGGEST_SHOWN = 100  # candidates listed in the panel (Accept all takes every one)


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
            base=reverse("sessions:list"),
        )
        hot = hot_states(pager.page.object_list)
    return render_page(
        request,
        "sessions/session_list.html",
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


def _travel(session: Session, form: SessionAtForm) -> dict | None:
    """The context as of the form's moment (``session_context(at=...)``), None for now."""
    if not form.is_valid() or not form.cleaned_data.get("at"):
        return None
    at = form.cleaned_data["at"]
    context = session_services.session_context(session_id=session.session_id,
                                               last=TRAVEL_LAST, at=at)
    upto = session.messages.filter(ts__lte=at).count()
    rows = [(dt.datetime.fromisoformat(m["at"]), m) for m in context["messages"]]
    return {"at": at, "summary": context["summary"], "upto": upto,
            "messages": [{**m, "ts": ts} for ts, m in rows]}


def _suggestions(session: Session, *, bound: dict | None = None, note: str = "") -> dict:
    """The suggested memories panel: the session's candidates (a dry run), each with the
    live memory already holding its text (dedup answers that one) or its edited version,
    and ``bound`` (``{index: form}``) for a form shown again with its errors."""
    result = session_extraction.session_extract(session_id=session.session_id, dry_run=True)
    found = result["candidates"]
    hashes = {content_hash(c["content"]) for c in found}
    live = (Memory.objects.filter(user_id=session.user_id, conversation_id=session.session_id,
                                  deleted_at__isnull=True)
            .filter(Q(content_hash__in=hashes) | Q(metadata__extraction__edited=True))
            .only("memory_id", "type", "content_hash", "metadata", "content")
            .order_by("created_at", "memory_id")[:2000])
    by_hash, by_seqs = {}, {}
    for m in live:
        by_hash.setdefault((m.type, m.content_hash), m)
        source = (m.metadata or {}).get("source")
        if isinstance(source, dict) and source.get("session_id") == session.session_id:
            by_seqs.setdefault((m.type, tuple(source.get("seqs") or ())), m)
    rows = []
    for n, c in enumerate(found):
        memory = by_hash.get((c["type"], content_hash(c["content"])))
        edited = None
        if memory is None:
            edited = by_seqs.get((c["type"], tuple(c["seqs"])))
        initial = {"content": c["content"], "type": c["type"],
                   "seqs": ",".join(str(x) for x in c["seqs"]),
                   "confidence": c["confidence"], "method": result["method"], "index": n}
        form = (bound or {}).get(n) or CandidateForm(initial={**initial, "edited": True},
                                                     auto_id=f"cand{n}_%s")
        source = ((memory or edited).metadata or {}).get("source") if (memory or edited) else None
        accepted = isinstance(source, dict) and source.get("session_id") == session.session_id
        rows.append({"c": c, "index": n, "memory": memory or edited, "edited": edited is not None,
                     "accepted": accepted,
                     "initial": initial, "form": form,
                     "open": n in (bound or {})})
    shown = rows[:SUGGEST_SHOWN]
    # A form whose candidate is no longer listed (the suggestions changed meanwhile) says
    # its errors at the top of the panel.
    lost = [" ".join(e for errors in form.errors.values() for e in errors)
            for n, form in (bound or {}).items() if n >= len(shown)]
    return {"rows": rows, "shown": shown, "method": result["method"], "note": note,
            "error": " ".join(lost), "pending": sum(1 for r in rows if r["memory"] is None)}


def _detail_context(request, session: Session, *, suggest: dict | None = None) -> dict:
    memories_ = _session_memories(session)
    promoted = {}
    for m in memories_:
        source = (m.metadata or {}).get("promoted_from")
        if isinstance(source, dict) and source.get("session_id") == session.session_id:
            promoted.setdefault(source.get("seq"), m)
    at_form = SessionAtForm(request.GET if "at" in request.GET else None)
    travel = _travel(session, at_form) if at_form.is_bound else None
    if suggest is None and request.GET.get("suggest") == "1":
        suggest = _suggestions(session)
    return {
        "session": session,
        "messages_": [(msg, promoted.get(msg.seq)) for msg in session.messages.order_by("seq")],
        "session_memories": memories_,
        "hot": hot_states([session]).get(session.session_id),
        "can_edit": has_role(request.user, "editor"),
        "at_form": at_form,
        "travel": travel,
        "suggest": suggest,
    }


@require_GET
@role_required("viewer")
def session_detail(request, session_id: str):
    """The whole transcript from the database (it outlives the Redis hot window), each
    message marked folded (into the summary) or hot; the session's memories and, per
    message, the memory it was promoted to (if any). ``?at=`` shows the context as it was
    at that moment instead; ``?suggest=1`` opens the suggested memories (a dry run of the
    extraction, computed only when asked)."""
    session = get_object_or_404(Session, session_id=session_id)
    context = _detail_context(request, session)
    bad_at = context["at_form"].is_bound and not context["at_form"].is_valid()
    return render_page(request, "sessions/session_detail.html", context,
                       status=400 if bad_at else 200)


@require_GET
@role_required("viewer")
def session_suggest(request, session_id: str):
    """The suggested memories panel: htmx gets it alone; a plain browser the session page
    with the panel open."""
    session = get_object_or_404(Session, session_id=session_id)
    if not request.htmx:
        return redirect(_panel_url(session))
    return render_page(request, SUGGEST_PANEL, {
        "session": session, "suggest": _suggestions(session),
        "can_edit": has_role(request.user, "editor")})


def _panel_url(session: Session) -> str:
    return (reverse("sessions:detail", args=[session.session_id])
            + "?suggest=1#suggested-memories")


def _panel_answer(request, session: Session, text: str, *, bound: dict | None = None,
                  status: int = 200):
    """After an accept: htmx gets the panel (and the session's memories out of band); a
    plain browser a redirect back to the panel (PRG), or the page again with the errors."""
    if bound:
        suggest = _suggestions(session, bound=bound)
        if request.htmx:
            return render_page(request, SUGGEST_PANEL, {
                "session": session, "suggest": suggest, "can_edit": True}, status=status)
        return render_page(request, "sessions/session_detail.html",
                           _detail_context(request, session, suggest=suggest), status=status)
    if request.htmx:
        return render_page(request, SUGGEST_PANEL, {
            "session": session, "suggest": _suggestions(session, note=text), "can_edit": True,
            "session_memories": _session_memories(session), "oob_panel": True})
    messages.success(request, text)
    return redirect(_panel_url(session))


def _written(memory, deduplicated: bool) -> str:
    if deduplicated:
        return f"Already a memory: {memory.memory_id} (the live one holding that text)."
    return f"Memory written: {memory.memory_id}."


@require_POST
@role_required("editor")
def candidate_accept(request, session_id: str):
    """Accept one suggested memory, as suggested or edited first (text, type, importance):
    written through the extraction's write path (validation, dedup, supersession
    proposals) with ``metadata.source``; errors shown in the candidate's form."""
    session = get_object_or_404(Session, session_id=session_id)
    form = CandidateForm(request.POST)
    index = request.POST.get("index", "")
    index = int(index) if index.isdigit() else -1
    form.auto_id = f"cand{index}_%s"
    if form.is_valid():
        data = form.cleaned_data
        try:
            memory, deduplicated = session_extraction.candidate_accept(
                session_id=session.session_id, content=data["content"], seqs=data["seqs"],
                type=data["type"], method=data["method"] or "local",
                confidence=data["confidence"] or 0.0, importance=data["importance"],
                edited=data["edited"], actor=request.user)
        except ServicePermissionDenied as exc:
            return forbidden(request, exc.message)
        except ServiceError as exc:
            field = getattr(exc, "field", None)
            form.add_error(field if field in form.fields and field not in ("seqs",) else None,
                           exc.message)
        else:
            return _panel_answer(request, session, _written(memory, deduplicated))
    if index < 0:
        return bad_request(request, "That suggestion is not one this page showed.")
    return _panel_answer(request, session, "", bound={index: form}, status=400)


@require_POST
@role_required("editor")
def candidate_accept_all(request, session_id: str):
    """Accept every suggested memory not yet one (a candidate accepted, edited or not,
    stays as it was): the dry run again, its pending candidates written as the extraction
    writes them."""
    session = get_object_or_404(Session, session_id=session_id)
    suggest = _suggestions(session)
    pending = [row["c"] for row in suggest["rows"] if row["memory"] is None]
    try:
        written = session_extraction.candidates_write(
            session_id=session.session_id, found=pending, method=suggest["method"],
            actor=request.user)
    except ServicePermissionDenied as exc:
        return forbidden(request, exc.message)
    except ServiceError as exc:
        return bad_request(request, exc.message)
    n = sum(1 for _, deduplicated in written if not deduplicated)
    text = (f"Accepted all: {n} memor{'ies' if n != 1 else 'y'} written."
            if pending else "Nothing left to accept.")
    return _panel_answer(request, session, text)


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
            "sessions/_session_state.html",
            {"session": session, "hot": True, "can_edit": True, "note": text},
        )
    messages.success(request, text)
    return redirect("sessions:detail", session_id=session.session_id)


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
            "sessions/_message_promoted.html",
            # The side panel of the session's memories is updated at once (out of band).
            {"memory": memory, "note": "already a memory:" if deduplicated else "promoted:",
             "session_memories": _session_memories(session), "oob_panel": True},
        )
    messages.success(request, text)
    return redirect(reverse("sessions:detail", args=[session.session_id]) + f"#msg-{seq}")
