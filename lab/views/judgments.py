"""The judgments page: grade results, list grades, export and import them as CSV, and the
raters' agreement."""

import csv
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.pages import forbidden, paginate, refuse, render_page, role_required
from lab import judgments as lab_judgments
from lab.evaluation import K_MAX, live_figures
from lab.forms import SIDES, JudgmentFilterForm, JudgmentImportForm
from lab.models import Judgment
from lab.views.common import lab_nav, safe_next
from memories.audit import snippet
from memories.errors import InvalidInput, ServiceError
from memories.models import Memory
from memories.validation import MEMORY_ID_RE


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@role_required("viewer")
def judgments(request):
    """GET: judgments, filterable. POST (editor): grade a result 0-3 as the current user;
    htmx gets the grade widget back for every copy of that result on the page."""
    if request.method == "POST":
        return _judge(request)
    return _judgments_page(request, JudgmentImportForm())


def _filtered(request) -> tuple[JudgmentFilterForm, object, dict]:
    """The filter form, the judgments it selects (newest first) and its URL parameters."""
    form = JudgmentFilterForm(request.GET)
    form.is_valid()
    data = getattr(form, "cleaned_data", {})
    rows = Judgment.objects.all().order_by("-updated_at", "-id")
    params = {}
    for key, column in (("user_id", "user_id"), ("q", "query"), ("reviewer", "reviewer")):
        if data.get(key):
            value = " ".join(data[key].split()) if key == "q" else data[key]
            rows = rows.filter(**{column: value})
            params[key] = data[key]
    return form, rows, params


def _judgments_page(request, import_form, *, report=None, status=200):
    form, rows, params = _filtered(request)
    pager = paginate(request, rows, per_page=50, params=params, base=reverse("lab:judgments"))
    pager.page.object_list = list(pager.page.object_list)
    _add_snippets(pager.page.object_list)
    return render_page(
        request,
        "lab/judgments.html",
        {
            **lab_nav("judgments"),
            "form": form,
            "pager": pager,
            "export_url": reverse("lab:judgments-export")
            + ("?" + urlencode(params) if params else ""),
            "import_form": import_form,
            "report": report,
            "can_import": has_role(request.user, "editor"),
            # Over the namespace and query filtered on (never the rater: it compares raters).
            "agreement": lab_judgments.judgment_agreement(
                user_id=params.get("user_id", ""), query=params.get("q", "")
            ),
        },
        partial="rows",
        status=status,
    )


class _Echo:
    """A file whose write returns the line, for csv.writer inside a streaming response."""

    def write(self, value: str) -> str:
        return value


@require_GET
@role_required("viewer")
def judgments_export(request):
    """``/lab/judgments/export.csv``: the judgments the page's filters select, as CSV
    (``lab.judgments.CSV_COLUMNS``), streamed."""
    _, rows, _ = _filtered(request)
    writer = csv.writer(_Echo())
    response = StreamingHttpResponse(
        (writer.writerow(line) for line in lab_judgments.judgment_csv_rows(rows.order_by("pk"))),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="judgments.csv"'
    return response


@require_POST
@role_required("editor")
def judgments_import(request):
    """Import a CSV of judgments: the good rows are recorded, each bad one is named (line,
    column, why) on the judgments page; a file that cannot be read is a form error (400)."""
    form = JudgmentImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _judgments_page(request, form, status=400)
    try:
        report = lab_judgments.judgments_import_csv(actor=request.user,
                                                    text=form.cleaned_data["file"])
    except InvalidInput as exc:
        form.add_error("file", exc.message)
        return _judgments_page(request, form, status=400)
    return _judgments_page(request, JudgmentImportForm(), report=report)


def _add_snippets(judgments) -> None:
    """``j.snippet``: the judged memory's text, shortened (one query for the page), so a
    person sees what was graded, not only its id; empty for a purged memory."""
    texts = dict(Memory.objects.filter(memory_id__in={j.memory_id for j in judgments})
                 .values_list("memory_id", "content"))
    for j in judgments:
        j.snippet = snippet(texts.get(j.memory_id, ""))


def _judge(request):
    if not has_role(request.user, "editor"):
        return forbidden(request, "Grading results needs the editor role.")
    fallback = reverse("lab:compare")
    next_url = safe_next(request, request.POST.get("next"), fallback)
    memory_id = request.POST.get("memory_id", "")
    try:
        grade = int(request.POST.get("grade", ""))
    except ValueError:
        grade = -1
    try:
        judgment, _ = lab_judgments.judgment_set(
            actor=request.user,
            user_id=request.POST.get("user_id"),
            query=request.POST.get("q", ""),
            memory_id=memory_id,
            grade=grade,
        )
    except ServiceError as exc:
        if request.htmx:
            return refuse(request, exc.message, status=exc.status)
        messages.error(request, f"Not recorded: {exc.message}")
        return HttpResponseRedirect(next_url)
    if not request.htmx:
        messages.success(request, f"Graded {memory_id} {grade} for “{judgment.query}”.")
        return HttpResponseRedirect(next_url)
    table = lab_judgments.judgment_table(
        user_id=judgment.user_id, query=judgment.query, memory_ids=[memory_id]
    ).get(memory_id, {})
    username = request.user.get_username()
    response = render(
        request,
        "lab/_grade.html",
        {
            "oob": True,
            "memory_id": memory_id,
            "user_id": judgment.user_id,
            "q": judgment.query,
            "next_url": next_url,
            "can_judge": True,
            "mine": str(table.get(username, "")),
            "others": sorted((r, g) for r, g in table.items() if r != username),
        },
    )
    rankings = _rankings(request.POST)
    if rankings:
        # Every column's nDCG@k / P@k, recomputed with this grade (out of band, by id).
        k, sides = rankings
        gains = lab_judgments.judgment_gains(user_id=judgment.user_id, query=judgment.query)
        for side, ranked in sides.items():
            response.write(
                render_to_string(
                    "lab/_live_metrics.html",
                    {"side": side, "oob": True, "m": live_figures(ranked, gains, k)},
                    request=request,
                )
            )
    return response


def _rankings(post) -> tuple[int, dict[str, list[str]]] | None:
    """``(k, {"a": ids, "b": ids, ...})`` from the compare page's ``#live-rankings`` (sent
    with each grade by htmx: ``sides``, the compared sides, ``a,b`` when absent, and each
    side's ``ranked_<side>``), or None when they are absent or malformed (the grade still
    counts; the figures then refresh with the next page load)."""
    try:
        k = int(post.get("k", ""))
    except ValueError:
        return None
    if not 1 <= k <= K_MAX:
        return None
    compared = post.get("sides", "a,b").split(",")
    if not set(compared) <= set(SIDES) or len(set(compared)) != len(compared):
        return None
    sides = {}
    for side in compared:
        ids = post.getlist(f"ranked_{side}")
        if len(ids) > K_MAX or not all(MEMORY_ID_RE.match(i) for i in ids):
            return None
        sides[side] = ids
    return k, sides

