"""The Recalls pages: the log of traced recalls, filtered and paged, and one recall as it
was answered (each result's text at the version served, with its explain and what became
of its memory since), replayed now with its own profile or another, side by side."""

from dataclasses import dataclass

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.pages import paginate, render_page, role_required
from lab import judgments as lab_judgments
from lab.evaluation import compare_lists
from lab.models import QuerySet
from memories import store
from memories.errors import ServiceError
from recalls import readers
from recalls.forms import AddToQuerySetForm, RecallFilterForm, ReplayForm
from recalls.models import RECALL_ID_RE, Recall
from recalls.replay import recall_replay
from search.models import RankingProfile

DETAIL = "recalls/recall_detail.html"


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def recall_list(request):
    """``/recalls/?user_id=&actor=&agent_id=&interface=&since=&until=&q=&per_page=&page=``:
    traced recalls, newest first; htmx gets the ``#recall-rows`` fragment. Bad filters: the
    form's errors, 400. Queries: one COUNT and one page (its counts are subqueries)."""
    form = RecallFilterForm(request.GET)
    pager = None
    if form.is_valid():
        pager = paginate(request, readers.recalls_listed(form.where()),
                         per_page=form.cleaned_data["per_page"], params=form.params(),
                         base=reverse("recalls:list"))
    return render_page(request, "recalls/recall_list.html", {"form": form, "pager": pager},
                       partial="rows", status=200 if pager else 400)


def recall_or_none(recall_id: str) -> Recall | None:
    """The recall ``recall_id`` (``rc_`` + 16 hex digits), or None (no such id, or not an
    id at all)."""
    return readers.recall_find(recall_id) if RECALL_ID_RE.match(recall_id) else None


def not_found(request, recall_id: str):
    """404: no recall ``recall_id`` (never traced, expired from the log, or mistyped)."""
    return render(request, "404.html", {
        "what": "This recall", "back_url": reverse("recalls:list"),
        "back_label": "Back to the recalls",
        "message": "A recall leaves the log after its retention, and a purge takes its "
                   "memory's results with it."}, status=404)


@dataclass
class ReplayRow:
    """One result of a replay: its rank, the hit (``search.results`` shape) and how it
    moved against the recall as served (``{"kind": up|down|same|new, "n"}``)."""

    rank: int
    hit: object
    move: dict
    grade: dict | None = None


def _replay(recall: Recall, form: ReplayForm, served: list) -> tuple[dict, int]:
    """A valid replay form's replay: ``({"found", "rows", "gone", "ranks", "profile",
    "diff"}, 200)``, or ``({"error"}, status)`` when it cannot run."""
    profile = form.cleaned_data["profile"] or recall.profile
    try:
        found = recall_replay(recall, profile=profile)
    except store.RedisError:
        return {"error": "The search index (Redis) is unreachable, so the replay cannot run. "
                         "Try again once Redis is back."}, 503
    except ServiceError as exc:
        return {"error": f"The replay cannot run: {exc.message}"}, exc.status
    before = [s.result.memory_id for s in served]
    after = [h.memory_id for h in found.results]
    diff = compare_lists(before, after, max(len(before), len(after), 1))
    return {
        "found": found, "profile": profile, "diff": diff,
        "rows": [ReplayRow(rank, h, diff["moves"][h.memory_id])
                 for rank, h in enumerate(found.results, start=1)],
        "ranks": diff["rank_b"], "gone": set(diff["dropped"]),
    }, 200


def _shown(value) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def query_sets_for(request, recall: Recall) -> tuple[list[QuerySet], list[QuerySet]]:
    """The query sets of the recall's namespace that hold its query, and those the user may
    add it to (an editor's own sets; an admin's, every one)."""
    query = " ".join(recall.query.split())
    in_ns = list(QuerySet.objects.filter(user_id=recall.user_id).order_by("name"))
    if not has_role(request.user, "editor"):
        return [s for s in in_ns if query in s.queries], []
    admin, me = has_role(request.user, "admin"), request.user.get_username()
    return ([s for s in in_ns if query in s.queries],
            [s for s in in_ns if query not in s.queries and (admin or s.created_by == me)])


def detail_context(request, recall: Recall, *, set_form: AddToQuerySetForm | None = None
                   ) -> tuple[dict, int]:
    """The recall page's context and status: the results as served, grades, query sets and,
    when the request asks one (``?replay=…&profile=``), the replay beside them."""
    served = readers.served_results(recall)
    profiles = list(RankingProfile.objects.order_by("name").values_list("name", flat=True))
    asked = "replay" in request.GET
    # "Replay with profile" offers another profile first: its own is "Replay now".
    other = next((p for p in profiles if p != recall.profile), "")
    replay_form = ReplayForm(request.GET if asked else None, profiles=profiles,
                             initial={"replay": "profile", "profile": other})
    replay, status = {}, 200
    if asked and replay_form.is_valid():
        replay, status = _replay(recall, replay_form, served)
    elif asked:
        status = 400
    query = " ".join(recall.query.split())
    ids = {s.result.memory_id for s in served} | {r.hit.memory_id for r in replay.get("rows", ())}
    grades = lab_judgments.judgment_table(user_id=recall.user_id, query=query,
                                          memory_ids=ids) if query else {}
    me = request.user.get_username()

    def grade(memory_id: str) -> dict:
        table = grades.get(memory_id, {})
        return {"mine": str(table.get(me, "")),
                "others": sorted((r, g) for r, g in table.items() if r != me)}

    for row in replay.get("rows", ()):
        row.grade = grade(row.hit.memory_id)
    holding, addable = query_sets_for(request, recall)
    return {
        "recall": recall,
        # The filters applied, for reading: a list as its items, a mapping as key=value.
        "filters": [(name, _shown(value)) for name, value in (recall.filters or {}).items()],
        "served": [{"s": s, "grade": grade(s.result.memory_id),
                    "now_rank": replay.get("ranks", {}).get(s.result.memory_id)}
                   for s in served],
        "feedback": sorted(recall.feedback.all(), key=lambda f: (f.memory_id, f.actor)),
        "replay_form": replay_form,
        "replay": replay,
        "query": query,
        "can_judge": bool(query) and has_role(request.user, "editor"),
        # Where a grade posted without JavaScript comes back to: this page, replay kept.
        "next_url": reverse("recalls:detail", args=[recall.recall_id])
        + (f"?{request.GET.urlencode()}" if request.method == "GET" and request.GET else ""),
        "holding_sets": holding,
        "set_form": set_form or AddToQuerySetForm(sets=addable),
        "can_add": bool(query) and has_role(request.user, "editor"),
    }, status


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def recall_detail(request, recall_id: str):
    """``/recalls/<recall_id>/``: one recall as it was answered; ``?replay=1&profile=``
    replays it beside (htmx gets the ``#recall-results`` fragment). 404 for an unknown id;
    400 for a profile that is not one; 503 when Redis cannot answer the replay."""
    recall = recall_or_none(recall_id)
    if recall is None:
        return not_found(request, recall_id)
    context, status = detail_context(request, recall)
    return render_page(request, DETAIL, context, partial="results", status=status)
