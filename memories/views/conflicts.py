"""The Conflicts page: the review queue of proposed supersessions (``Conflict`` rows, written
by ``memories.services.conflicts``), each older and newer fact side by side with their word
diff and the detector's evidence; accept, reject, correct the newer text, accept several.

Every action is a plain form (POST, then a redirect back to the list it came from: works
without JavaScript); with htmx it answers the ``#conflict-rows`` fragment. A refused action
shows its error on the proposal it was about.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.http import QueryDict
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, paginate, render_page, role_required
from memories import services
from memories.errors import Conflict as ConflictError
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.errors import ServiceError
from memories.models import Conflict, Memory
from memories.validity_forms import (
    ConflictBulkForm,
    ConflictDecideForm,
    ConflictEditForm,
    ConflictFilterForm,
)
from memories.views.detail import folded_diff, word_diff

LIST = "memories/conflicts.html"


def _back(query: QueryDict) -> str:
    return urlencode({k: v for k, v in query.items() if k in ("user_id", "status", "per_page",
                                                             "page")})


def _item(conflict: Conflict, back: str, bound: dict) -> dict:
    """One proposal as the page shows it: its diff, and its forms (the bound one, with its
    errors, when an action on it was refused)."""
    pk = conflict.pk
    decide = bound.get(("decide", pk)) or ConflictDecideForm(conflict_id=pk,
                                                             initial={"back": back})
    edit = bound.get(("edit", pk)) or ConflictEditForm(conflict_id=pk, initial={
        "content": conflict.newer.content, "version": conflict.newer.version, "back": back})
    words = conflict.evidence.get("words") if isinstance(conflict.evidence, dict) else None
    return {"c": conflict, "decide": decide, "edit": edit,
            "words": words if isinstance(words, list) else [],
            "diff": folded_diff(word_diff(conflict.older.content, conflict.newer.content))}


def _list_response(request, query, *, bound: dict | None = None, bulk=None, status: int = 200):
    """The page (or its ``#conflict-rows`` fragment) for the filters in ``query``."""
    form = ConflictFilterForm(query)
    pager, items, back = None, [], ""
    if form.is_valid():
        rows = (Conflict.objects.filter(status=form.cleaned_data["status"])
                .select_related("newer", "older").order_by("-created_at", "-id"))
        if form.cleaned_data["user_id"]:
            rows = rows.filter(user_id=form.cleaned_data["user_id"])
        pager = paginate(request, rows, per_page=form.cleaned_data["per_page"],
                         params=form.params(), base=reverse("memories:conflicts"),
                         number=query.get("page"))
        back = urlencode({**form.params(), "page": pager.page.number})
        items = [_item(c, back, bound or {}) for c in pager.page]
    elif status == 200:
        status = 400
    context = {
        "form": form, "pager": pager, "items": items, "back": back,
        "status": form.cleaned_data.get("status") if form.is_valid() else "open",
        "can_edit": has_role(request.user, "editor"),
        "bulk_form": bulk or ConflictBulkForm(initial={"back": back}),
        "shown": ",".join(str(i["c"].pk) for i in items),
        # The boxes a refused bulk accept had ticked, ticked again.
        "selected": set(bulk.data.getlist("conflict_ids")) if bulk is not None else set(),
    }
    return render_page(request, LIST, context, partial="rows", status=status)


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def conflict_list(request):
    """``/conflicts/?user_id=&status=``: open proposals by default, newest first."""
    return _list_response(request, request.GET)


def _after(request, query: QueryDict, text: str, *, level=messages.success):
    """PRG back to the list the action came from; htmx gets that list's fragment."""
    level(request, text)
    if request.htmx:
        return _list_response(request, query)
    back = ConflictFilterForm(query)
    params = {**back.params(), "page": query.get("page", "")} if back.is_valid() else {}
    params = {k: v for k, v in params.items() if v}
    url = reverse("memories:conflicts")
    return redirect(f"{url}?{urlencode(params)}" if params else url)


def _refused(request, query, exc: ServiceError, key: tuple, form):
    if isinstance(exc, ServicePermissionDenied):
        return forbidden(request, exc.message)
    add_service_error(form, exc)
    return _list_response(request, query, bound={key: form}, status=exc.status)


@require_POST
@role_required("editor")
def conflict_decide(request, conflict_id: int):
    """Accept (``older`` superseded by ``newer``) or reject (both hold) one proposal."""
    conflict = get_object_or_404(Conflict, pk=conflict_id)
    form = ConflictDecideForm(request.POST, conflict_id=conflict.pk)
    query = QueryDict(request.POST.get("back", "")[:2000])
    if not form.is_valid():
        return _list_response(request, query, bound={("decide", conflict.pk): form}, status=400)
    accept = form.cleaned_data["decision"] == "accept"
    service = services.conflict_accept if accept else services.conflict_reject
    try:
        service(conflict_id=conflict.pk, actor=request.user, reason=form.cleaned_data["reason"])
    except ServiceError as exc:
        return _refused(request, query, exc, ("decide", conflict.pk), form)
    if accept:
        text = (f"Accepted: {conflict.older_id} is superseded by {conflict.newer_id}. "
                f"Rejecting it later undoes this.")
    else:
        text = f"Rejected: {conflict.older_id} and {conflict.newer_id} both hold."
    return _after(request, query, text)


@require_POST
@role_required("editor")
def conflict_edit(request, conflict_id: int):
    """Correct the proposal's newer text: a new version of that memory (the proposal stays
    as it is, to be decided)."""
    conflict = get_object_or_404(Conflict.objects.select_related("newer"), pk=conflict_id)
    form = ConflictEditForm(request.POST, conflict_id=conflict.pk)
    query = QueryDict(request.POST.get("back", "")[:2000])
    key = ("edit", conflict.pk)
    if not form.is_valid():
        return _list_response(request, query, bound={key: form}, status=400)
    data = form.cleaned_data
    try:
        memory = services.memory_update(
            memory_id=conflict.newer_id, actor=request.user, reason=data["reason"],
            expected_version=data["version"], content=data["content"])
    except ConflictError as exc:
        if exc.field != "version":
            return _refused(request, query, exc, key, form)
        # Changed meanwhile: the typed text kept, the version moved on (a second Save is
        # deliberate), and who changed it, as on the memory's own page.
        newer = Memory.objects.get(pk=conflict.newer_id)
        last = newer.history.order_by("-history_date", "-history_id").first()
        who = (last.changed_by if last else "") or "someone"
        data = request.POST.copy()
        data["version"] = str(newer.version)
        form = ConflictEditForm(data, conflict_id=conflict.pk)
        form.is_valid()
        form.add_error(None, f"{who} changed {newer.memory_id} (now version {newer.version}) "
                             f"after you opened the form. Your text is kept; Save again to "
                             f"overwrite.")
        return _list_response(request, query, bound={key: form}, status=exc.status)
    except ServiceError as exc:
        return _refused(request, query, exc, key, form)
    if memory.version == conflict.newer.version:
        return _after(request, query, "Nothing changed: no new version written.",
                      level=messages.info)
    return _after(request, query, f"Edited {memory.memory_id} (version {memory.version}).")


@require_POST
@role_required("editor")
def conflict_bulk(request):
    """Accept the ticked proposals, or every one the page showed; each in its own
    transaction (``services.conflicts_decide``): one that cannot be accepted is named and
    the others still are."""
    form = ConflictBulkForm(request.POST)
    query = QueryDict(request.POST.get("back", "")[:2000])
    if not form.is_valid():
        return _list_response(request, query, bulk=form, status=400)
    data = form.cleaned_data
    done, failed = services.conflicts_decide(conflict_ids=data["ids"], accept=True,
                                             actor=request.user, reason=data["reason"])
    text = f"Accepted {len(done)} proposal{'s' if len(done) != 1 else ''}."
    if failed:
        for conflict_id, message in failed.items():
            messages.error(request, f"Proposal {conflict_id} was not accepted: {message}")
    return _after(request, query, text)
