"""Evaluation run pages: list, detail, compare two runs."""

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, paginate, render_page, role_required
from lab import runs as lab_runs
from lab.forms import RunCompareForm, RunForm
from lab.judgments import AGENT_FEEDBACK
from lab.models import EvalRun
from lab.views.charts import metric_bars
from lab.views.common import METRIC_LABELS, lab_nav
from memories import store
from memories.errors import ServiceError
from memories.models import Memory
from search import profile_services

# --- runs ---------------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def run_list(request):
    """GET: runs and the form for a new one. POST (editor): evaluate and save a run."""
    form = RunForm(
        request.POST if request.method == "POST" else None,
        initial={"k": 10, "query_set": request.GET.get("query_set"),
                 "rater": "agent" if request.GET.get("rater") == "agent" else "judgments"},
    )
    status = 200
    if request.method == "POST":
        if not has_role(request.user, "editor"):
            return forbidden(request, "Starting a run needs the editor role.")
        if form.is_valid():
            data = form.cleaned_data
            try:
                run = lab_runs.run_create(
                    actor=request.user,
                    name=data["name"],
                    query_set=data["query_set"],
                    profiles=data["profiles"],
                    k=data["k"],
                    reviewer=form.reviewer_name(),
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            except store.RedisError:
                form.add_error(
                    None, "The search index (Redis) is unreachable; try again once it is back."
                )
                status = 503
            else:
                messages.success(request, f"Run {run.pk} saved.")
                return HttpResponseRedirect(reverse("lab:run", args=[run.pk]))
        else:
            status = 400
    runs = EvalRun.objects.defer("per_query", "unjudged").select_related("query_set")
    pager = paginate(request, runs, per_page=25, params={}, base=reverse("lab:runs"))
    return render_page(
        request,
        "lab/runs.html",
        {
            **lab_nav("runs"),
            "form": form,
            "pager": pager,
            "can_create": has_role(request.user, "editor"),
            "compare_form": RunCompareForm(initial=_newest_two()),
        },
        status=status,
    )


def _newest_two() -> dict:
    """Run compare defaults: the newest run as B, the one before as A."""
    newest = list(EvalRun.objects.values_list("pk", flat=True)[:2])
    return {"b": newest[0], "a": newest[1]} if len(newest) == 2 else {}


def _series(run: EvalRun, prefix: str = "") -> list[tuple[str, dict]]:
    return [
        (f"{prefix}{p['name']} v{p.get('version') or '?'}", run.metrics.get(p["name"], {}))
        for p in run.profiles
    ]


@require_GET
@role_required("viewer")
def run_detail(request, pk: int):
    run = EvalRun.objects.filter(pk=pk).select_related("query_set").first()
    if run is None:
        return render(request, "404.html", {"message": f"No run {pk}."}, status=404)
    names = [p["name"] for p in run.profiles]
    by_query: dict[str, dict] = {}
    for row in run.per_query:
        entry = by_query.setdefault(row["query"], {"query": row["query"], "cells": {}})
        entry["cells"][row["profile"]] = row
    query_rows = [
        {
            "query": e["query"],
            "cells": [e["cells"].get(n) for n in names],
            "judged": any(c and c["judged"] for c in e["cells"].values()),
        }
        for e in by_query.values()
    ]
    a, b = names[0], names[1] if len(names) > 1 else names[0]
    contents = dict(
        Memory.objects.filter(
            memory_id__in=[u["memory_id"] for u in run.unjudged[:200]]
        ).values_list("memory_id", "content")
    )
    unjudged = [
        {
            **u,
            "content": contents.get(u["memory_id"], ""),
            "judge_url": reverse("lab:compare")
            + "?"
            + urlencode(
                {"user_id": u["user_id"], "q": u["query"], "a": a, "b": b}
                | dict(zip(("c", "d"), names[2:4], strict=False))
                | {"k": run.k}
                | ({"query_set": run.query_set_id} if run.query_set_id else {})
            ),
        }
        for u in run.unjudged[:200]
    ]
    return render_page(
        request,
        "lab/run_detail.html",
        {
            **lab_nav("runs"),
            "run": run,
            "agent_feedback": run.reviewer == AGENT_FEEDBACK,
            "chart": metric_bars(_series(run)),
            "judged_any": any(m.get("queries") for m in run.metrics.values()),
            "names": names,
            "query_rows": query_rows,
            "unjudged": unjudged,
            "unjudged_total": len(run.unjudged),
            "metric_labels": METRIC_LABELS,
            "settings": profile_services.SETTINGS,
            "other_runs": EvalRun.objects.exclude(pk=run.pk).defer("per_query", "unjudged")[:50],
        },
    )


@require_GET
@role_required("viewer")
def run_compare(request):
    form = RunCompareForm(request.GET or None, initial=_newest_two())
    ctx = {**lab_nav("runs"), "form": form, "metric_labels": METRIC_LABELS}
    status = 200
    if request.GET:
        if form.is_valid():
            a, b = form.cleaned_data["a"], form.cleaned_data["b"]
            a = EvalRun.objects.get(pk=a.pk)  # with its per-query rows
            b = EvalRun.objects.get(pk=b.pk)
            cmp = lab_runs.run_compare(a, b)
            ctx.update(
                {
                    "a": a,
                    "b": b,
                    "cmp": cmp,
                    "mean_delta_rows": [
                        (name, d["queries"], [d[m] for m in METRIC_LABELS])
                        for name, d in cmp["mean_deltas"].items()
                    ],
                    "chart": metric_bars(_series(a, "A · ") + _series(b, "B · ")),
                    "judged_any": any(m.get("queries") for r in (a, b) for m in r.metrics.values()),
                }
            )
        else:
            status = 400
    return render_page(request, "lab/run_compare.html", ctx, status=status)

