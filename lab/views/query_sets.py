"""Query set pages."""

from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, fragment_answer, refuse, render_page, role_required
from lab import query_sets as lab_query_sets
from lab.forms import FeedbackQuerySetForm, QuerySetForm
from lab.models import Judgment, QuerySet
from lab.views.common import lab_nav
from memories.errors import InvalidInput, ServiceError
from search.profiles import profile_default

# --- query sets -------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def queryset_list(request):
    """GET: the sets and two forms. POST (editor): a set of the queries typed, or (the
    ``fb-`` form) of a namespace's logged queries that received recall feedback."""
    from_feedback = request.method == "POST" and "fb-from_feedback" in request.POST
    form = QuerySetForm(request.POST if request.method == "POST" and not from_feedback else None)
    feedback_form = FeedbackQuerySetForm(request.POST if from_feedback else None)
    status = 200
    if request.method == "POST" and not has_role(request.user, "editor"):
        return forbidden(request, "Creating a query set needs the editor role.")
    if from_feedback:
        if feedback_form.is_valid():
            data = feedback_form.cleaned_data
            try:
                qs = lab_query_sets.queryset_from_feedback(
                    actor=request.user, name=data["name"], user_id=data["user_id"],
                    **({"limit": data["limit"]} if data["limit"] else {}))
            except ServiceError as exc:
                add_service_error(feedback_form, exc)
                status = exc.status
            else:
                messages.success(request, f"Created query set {qs.name} from agent feedback "
                                          f"({len(qs.queries)} queries).")
                return HttpResponseRedirect(reverse("lab:queryset", args=[qs.pk]))
        else:
            status = 400
    elif request.method == "POST":
        if form.is_valid():
            try:
                qs = lab_query_sets.queryset_create(
                    actor=request.user,
                    name=form.cleaned_data["name"],
                    user_id=form.cleaned_data["user_id"],
                    queries=form.query_list(),
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                messages.success(request, f"Created query set {qs.name}.")
                return HttpResponseRedirect(reverse("lab:queryset", args=[qs.pk]))
        else:
            status = 400
    return render_page(
        request,
        "lab/querysets.html",
        {
            **lab_nav("querysets"),
            "form": form,
            "feedback_form": feedback_form,
            "querysets": QuerySet.objects.annotate(n_runs=Count("runs")),
            "can_create": has_role(request.user, "editor"),
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def queryset_detail(request, pk: int):
    qs = QuerySet.objects.filter(pk=pk).first()
    if qs is None:
        return render(request, "404.html", {"message": f"No query set {pk}."}, status=404)
    can_edit = _can_edit(request.user, qs)
    form = QuerySetForm(
        request.POST if request.method == "POST" else None,
        initial=_form_initial(qs),
    )
    status = 200
    if request.method == "POST":
        if not can_edit:
            return forbidden(request, "Only the query set's creator or an admin may change it.")
        if form.is_valid():
            try:
                qs = lab_query_sets.queryset_update(
                    actor=request.user,
                    pk=qs.pk,
                    name=form.cleaned_data["name"],
                    user_id=form.cleaned_data["user_id"],
                    queries=form.query_list(),
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                messages.success(request, "Saved.")
                return HttpResponseRedirect(reverse("lab:queryset", args=[qs.pk]))
        else:
            status = 400
    return _detail_page(request, qs, form, can_edit=can_edit, status=status)


def _can_edit(user, qs: QuerySet) -> bool:
    """As ``lab.query_sets`` decides: its creator (an editor) or an admin."""
    return has_role(user, "admin") or (
        has_role(user, "editor") and qs.created_by == user.get_username()
    )


def _rows(qs: QuerySet, *, note_errors: dict | None = None) -> list[dict]:
    """One row per query: its judgment count, its note, its compare link (which names the
    set, so the compare page shows the note)."""
    counts = dict(
        Judgment.objects.filter(user_id=qs.user_id, query__in=qs.queries)
        .values_list("query")
        .annotate(n=Count("id"))
        .order_by()
    )
    default = profile_default().name
    other = "bm25" if default != "bm25" else "keyword"
    notes = qs.notes or {}
    return [
        {
            "n": n,
            "query": q,
            "note": notes.get(q, ""),
            "judgments": counts.get(q, 0),
            **(note_errors or {}).get(q, {}),
            "compare_url": reverse("lab:compare")
            + "?"
            + urlencode(
                {"user_id": qs.user_id, "q": q, "a": default, "b": other, "query_set": qs.pk}
            ),
        }
        for n, q in enumerate(qs.queries, start=1)
    ]


def _detail_page(request, qs, form, *, can_edit, status=200, note_errors=None):
    return render_page(
        request,
        "lab/queryset_detail.html",
        {
            **lab_nav("querysets"),
            "qs": qs,
            "rows": _rows(qs, note_errors=note_errors),
            "form": form,
            "can_edit": can_edit,
            "runs": qs.runs.defer("per_query", "unjudged")[:20],
        },
        status=status,
    )


@require_POST
@vary_on_headers("HX-Request")
@role_required("viewer")
def queryset_note(request, pk: int):
    """Set or clear one query's note (``query``, ``note``; ``clear`` clears it). Without
    JavaScript: redirect to the set's page at that query (PRG), or the page again with the
    error at that query (400). htmx: that query's note block, saved or with its error."""
    qs = QuerySet.objects.filter(pk=pk).first()
    if qs is None:
        return render(request, "404.html", {"message": f"No query set {pk}."}, status=404)
    if not _can_edit(request.user, qs):
        return forbidden(request, "Only the query set's creator or an admin may change its notes.")
    query = request.POST.get("query", "")
    note = "" if request.POST.get("clear") else request.POST.get("note", "")
    try:
        qs = lab_query_sets.queryset_note_set(actor=request.user, pk=qs.pk, query=query,
                                              note=note)
    except ServiceError as exc:
        if isinstance(exc, InvalidInput) and exc.field == "query":
            # Not one of the set's queries (the set changed since the page was loaded).
            if request.htmx:
                return refuse(request, f"Not saved: {exc.message}", status=exc.status)
            messages.error(request, f"Not saved: {exc.message}")
            return HttpResponseRedirect(reverse("lab:queryset", args=[qs.pk]))
        key = " ".join(query.split())
        errors = {key: {"note_error": exc.message, "note_draft": note, "note_open": True}}
        if request.htmx:
            row = next((r for r in _rows(qs, note_errors=errors) if r["query"] == key), None)
            return _note_fragment(request, qs, row, status=exc.status)
        return _detail_page(request, qs, QuerySetForm(initial=_form_initial(qs)),
                            can_edit=True, status=exc.status, note_errors=errors)
    key = " ".join(query.split())
    row = next(r for r in _rows(qs) if r["query"] == key)
    if request.htmx:
        row["note_saved"] = "Note saved." if row["note"] else "Note cleared."
        return _note_fragment(request, qs, row)
    messages.success(request, f"Note {'saved' if row['note'] else 'cleared'} for “{key}”.")
    return HttpResponseRedirect(reverse("lab:queryset", args=[qs.pk]) + f"#note-{row['n']}")


def _note_fragment(request, qs, row, *, status=200):
    return fragment_answer(
        render(request, "lab/_query_note.html", {"qs": qs, "row": row, "can_edit": True},
               status=status)
    )


def _form_initial(qs) -> dict:
    return {"name": qs.name, "user_id": qs.user_id, "queries": "\n".join(qs.queries)}
