"""Query set pages."""

from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, render_page, role_required
from lab import query_sets as lab_query_sets
from lab.forms import QuerySetForm
from lab.models import Judgment, QuerySet
from lab.views.common import lab_nav
from memories.errors import ServiceError
from search.profiles import profile_default

# --- query sets -------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def queryset_list(request):
    form = QuerySetForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        if not has_role(request.user, "editor"):
            return forbidden(request, "Creating a query set needs the editor role.")
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
    can_edit = has_role(request.user, "admin") or (
        has_role(request.user, "editor") and qs.created_by == request.user.get_username()
    )
    form = QuerySetForm(
        request.POST if request.method == "POST" else None,
        initial={"name": qs.name, "user_id": qs.user_id, "queries": "\n".join(qs.queries)},
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
    counts = dict(
        Judgment.objects.filter(user_id=qs.user_id, query__in=qs.queries)
        .values_list("query")
        .annotate(n=Count("id"))
        .order_by()
    )
    default = profile_default().name
    other = "bm25" if default != "bm25" else "keyword"
    rows = [
        {
            "query": q,
            "judgments": counts.get(q, 0),
            "compare_url": reverse("lab:compare")
            + "?"
            + urlencode({"user_id": qs.user_id, "q": q, "a": default, "b": other}),
        }
        for q in qs.queries
    ]
    return render_page(
        request,
        "lab/queryset_detail.html",
        {
            **lab_nav("querysets"),
            "qs": qs,
            "rows": rows,
            "form": form,
            "can_edit": can_edit,
            "runs": qs.runs.defer("per_query", "unjudged")[:20],
        },
        status=status,
    )

