"""What a ranking tuner does from a recall's page: grade its results as the lab's judgments
(``lab.judgments``) and add its query to a query set (``lab.query_sets``). Each is a plain
form POST answered by a redirect back to the page, and an htmx request answered in place."""

from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.forms import add_service_error
from console.pages import bad_request, fragment_answer, refuse, render_page, role_required
from lab import judgments as lab_judgments
from lab import query_sets as lab_query_sets
from memories.errors import ServiceError
from recalls.forms import AddToQuerySetForm, GradeForm
from recalls.views.browse import DETAIL, detail_context, not_found, query_sets_for, recall_or_none

NO_QUERY = ("This recall's query was not kept (the log redacts queries), so there is no "
            "query to grade its results for or to add to a query set.")


def _back(request, recall_id: str, url: str) -> str:
    """``url`` when it is the recall's own page (its replay kept), else that page."""
    page = reverse("recalls:detail", args=[recall_id])
    parts = urlsplit(url or "")
    if not parts.scheme and not parts.netloc and parts.path == page:
        return url
    return page


@require_POST
@role_required("editor")
def recall_grade(request, recall_id: str):
    """Grade one result 0..3 for the recall's query, as the user (a lab judgment: the
    editor role, as the lab's judgments page). POST ``memory_id``, ``grade``, ``next``.
    htmx: the result's grade widget, out of band (every copy on the page: served and
    replayed); 400 for a bad grade, 404 for a memory not in the recall's namespace."""
    recall = recall_or_none(recall_id)
    if recall is None:
        if request.htmx:
            return refuse(request, f"No recall {recall_id}: it may have expired.", status=404)
        return not_found(request, recall_id)
    form = GradeForm(request.POST)
    if not form.is_valid():
        return bad_request(request, "Not graded: " + " ".join(
            e for errors in form.errors.values() for e in errors))
    if not recall.query.strip():
        return bad_request(request, NO_QUERY)
    data = form.cleaned_data
    back = _back(request, recall_id, data["next"])
    try:
        judgment, _ = lab_judgments.judgment_set(
            actor=request.user, user_id=recall.user_id, query=recall.query,
            memory_id=data["memory_id"], grade=data["grade"])
    except ServiceError as exc:
        if request.htmx:
            return refuse(request, f"Not graded: {exc.message}", status=exc.status)
        messages.error(request, f"Not graded: {exc.message}")
        return HttpResponseRedirect(back)
    if not request.htmx:
        messages.success(request, f"Graded {judgment.memory_id} {judgment.grade} for "
                                  f"“{judgment.query}”.")
        return HttpResponseRedirect(back)
    table = lab_judgments.judgment_table(user_id=judgment.user_id, query=judgment.query,
                                         memory_ids=[judgment.memory_id]).get(
                                             judgment.memory_id, {})
    me = request.user.get_username()
    return fragment_answer(render(request, "recalls/_grade.html", {
        "oob": True, "recall": recall, "memory_id": judgment.memory_id, "can_judge": True,
        "next_url": back, "g": {"mine": str(table.get(me, "")),
                                "others": sorted((r, g) for r, g in table.items() if r != me)},
    }))


@require_POST
@role_required("editor")
def recall_to_query_set(request, recall_id: str):
    """Add the recall's query to a query set of its namespace (``query_set``: one the user
    may change) or to a new one (``name``), through ``lab.query_sets``. Errors show on the
    form in place (400, or the writer's status); htmx gets the ``#query-sets`` fragment."""
    recall = recall_or_none(recall_id)
    if recall is None:
        if request.htmx:
            return refuse(request, f"No recall {recall_id}: it may have expired.", status=404)
        return not_found(request, recall_id)
    if not recall.query.strip():
        return bad_request(request, NO_QUERY)
    _holding, addable = query_sets_for(request, recall)
    form = AddToQuerySetForm(request.POST, sets=addable)
    status = 400
    if form.is_valid():
        picked = next((s for s in addable if s.pk == form.cleaned_data["query_set"]), None)
        try:
            if picked is not None:
                qs = lab_query_sets.queryset_update(
                    actor=request.user, pk=picked.pk, queries=[*picked.queries, recall.query])
            else:
                qs = lab_query_sets.queryset_create(
                    actor=request.user, name=form.cleaned_data["name"],
                    user_id=recall.user_id, queries=[recall.query])
        except ServiceError as exc:
            add_service_error(form, exc)
            status = exc.status
        else:
            messages.success(request, f"Added “{' '.join(recall.query.split())}” to query "
                                      f"set {qs.name}.")
            if not request.htmx:
                page = reverse("recalls:detail", args=[recall.recall_id])
                return HttpResponseRedirect(f"{page}#query-sets")
            form = None
            status = 200
    context, _ = detail_context(request, recall, set_form=form)
    return render_page(request, DETAIL, context, partial="querysets", status=status)
