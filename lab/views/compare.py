"""Compare two ranking profiles side by side on one query; explain a hit; save as a profile."""

import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.pages import render_page, role_required
from lab import evaluation as lab_evaluation
from lab import explain as lab_explain
from lab import judgments as lab_judgments
from lab.forms import MATCH_MODES, SIDES, CompareForm, tune_param, tune_params
from lab.models import QuerySet
from lab.views.charts import PART_COLOURS, SIDE_COLOURS, score_chart, stacked_bar
from memories import store
from memories.errors import ServiceError
from search import profile_services
from search.memory_search import memory_search
from search.models import RankingProfile

# --- compare --------------------------------------------------------------------------------


@dataclass
class Row:
    rank: int
    hit: object
    parts: dict
    bar: list
    explain_url: str
    move: dict | None = None  # B rows: up / down / same / new
    other_rank: int | None = None  # A rows: rank in B (None: dropped)
    mine: str = ""
    others: list = field(default_factory=list)


def _column(side, found, state, *, moves=None, other=None, grades, username):
    top = max((h.score for h in found.results), default=0.0)
    rows = []
    for rank, hit in enumerate(found.results, start=1):
        parts = lab_explain.score_parts(hit)
        table = grades.get(hit.memory_id, {})
        mine = table.get(username)
        rows.append(
            Row(
                rank=rank,
                hit=hit,
                parts=parts,
                bar=stacked_bar(parts, top),
                explain_url=reverse("lab:compare-explain")
                + "?"
                + urlencode({**state, "side": side, "memory_id": hit.memory_id}),
                move=(moves or {}).get(hit.memory_id),
                other_rank=(other or {}).get(hit.memory_id),
                mine="" if mine is None else str(mine),
                others=sorted((r, g) for r, g in table.items() if r != username),
            )
        )
    return rows


def sliders(profile: RankingProfile, side: str) -> list[dict]:
    """A side's range inputs, each starting at the profile's value (ranges widen to hold it);
    ``name`` is the side's URL parameter (``forms.tune_param``)."""
    specs = [
        ("w_rel", "Relevance w", "w_relevance", 0, 1, 0.05),
        ("w_rec", "Recency w", "w_recency", 0, 1, 0.05),
        ("w_imp", "Importance w", "w_importance", 0, 1, 0.05),
        ("half_life", "Half-life h", "half_life_hours", 1, 2160, 1),
        ("k1", "k1", "k1", 0, 3, 0.05),
        ("bm25_b", "b", "b", 0, 1, 0.05),
    ]
    out = []
    for param, label, setting, low, high, step in specs:
        value = getattr(profile, setting)
        out.append(
            {
                "name": tune_param(side, param),
                "label": label,
                "min": f"{min(low, value):g}",
                "max": f"{max(high, value):g}",
                "step": f"{step:g}",
                "value": f"{value:g}",
            }
        )
    return out


def _set_context(form, tuned: dict) -> dict | None:
    """The query set the comparison's query comes from (``query_set``): its name, the
    query's place in it, its note and links to the previous and next query (the
    comparison's profiles and sliders kept). None without a set of this namespace."""
    data = form.cleaned_data
    if not data.get("query_set"):
        return None
    qs = QuerySet.objects.filter(pk=data["query_set"], user_id=data["user_id"]).first()
    if qs is None:
        return None
    query = " ".join(data["q"].split())
    at = qs.queries.index(query) if query in qs.queries else None
    state = form.state(tuned=tuned)

    def link(i):
        if at is None or not 0 <= i < len(qs.queries):
            return None
        return reverse("lab:compare") + "?" + urlencode(state | {"q": qs.queries[i]})

    return {
        "qs": qs,
        "at": None if at is None else at + 1,
        "note": (qs.notes or {}).get(query, "") if at is not None else "",
        "prev_url": link(at - 1) if at is not None else None,
        "next_url": link(at + 1) if at is not None else None,
        "first_url": reverse("lab:compare") + "?" + urlencode(state | {"q": qs.queries[0]})
        if qs.queries else None,
    }


def _compare_context(request, form) -> tuple[dict, int]:
    """Run both rankings and compare them; ``(context, status)``."""
    data = form.cleaned_data
    profiles = {side: form.profile(side) for side in SIDES}
    tuned = {side: prof for side, (prof, is_tuned) in profiles.items() if is_tuned}
    state = form.state(tuned=tuned)
    prof_a, prof_b = profiles["a"][0], profiles["b"][0]
    ctx = {
        "prof_a": prof_a,
        "prof_b": prof_b,
        "state": state,
        "k": data["k"],
        # One head per side: its profile, tuned or not, sliders, save and reset.
        "heads": [
            {
                "side": side,
                "prof": prof,
                "base": form.profiles[data[side]],
                "tuned": is_tuned,
                "sliders": sliders(prof, side),
                "stemming": tune_param(side, "stemming"),
                "match_mode": tune_param(side, "match_mode"),
                "save_params": state | tune_params(prof, side) | {"side": side},
                "reset_url": reverse("lab:compare")
                + "?"
                + urlencode(form.state(tuned={s: p for s, p in tuned.items() if s != side})),
            }
            for side, (prof, is_tuned) in profiles.items()
        ],
        "hidden_state": form.state(),
        "match_modes": MATCH_MODES,
        "query_set": _set_context(form, tuned),
    }
    if not data["user_id"] or not data["q"].strip():
        return ctx, 200
    now = time.time()
    filters = form.filter_kwargs()
    try:
        found_a = memory_search(
            user_id=data["user_id"], query=data["q"], limit=data["k"], profile=prof_a, now=now,
            **filters,
        )
        found_b = memory_search(
            user_id=data["user_id"], query=data["q"], limit=data["k"], profile=prof_b, now=now,
            **filters,
        )
    except store.RedisError:
        ctx["error"] = (
            "The search index (Redis) is unreachable, so the comparison cannot run. "
            "Memories are safe in the database; try again once Redis is back."
        )
        return ctx, 503
    ids_a = [h.memory_id for h in found_a.results]
    ids_b = [h.memory_id for h in found_b.results]
    diff = lab_evaluation.compare_lists(ids_a, ids_b, data["k"])
    grades = lab_judgments.judgment_table(
        user_id=data["user_id"], query=data["q"], memory_ids=set(ids_a) | set(ids_b)
    )
    username = request.user.get_username()
    gains = lab_judgments.judgment_gains(user_id=data["user_id"], query=data["q"])
    live_a = lab_evaluation.live_figures(ids_a, gains, data["k"])
    live_b = lab_evaluation.live_figures(ids_b, gains, data["k"])
    ctx.update(
        {
            "found_a": found_a,
            "found_b": found_b,
            "diff": diff,
            "rows_a": _column(
                "a", found_a, state, other=diff["rank_b"], grades=grades, username=username
            ),
            "rows_b": _column(
                "b", found_b, state, moves=diff["moves"], grades=grades, username=username
            ),
            "new_count": sum(1 for m in diff["moves"].values() if m["kind"] == "new"),
            "chart": score_chart(
                [
                    (f"A · {prof_a.name}", SIDE_COLOURS["a"], [h.score for h in found_a.results]),
                    (f"B · {prof_b.name}", SIDE_COLOURS["b"], [h.score for h in found_b.results]),
                ],
                data["k"],
            ),
            "judge_query": " ".join(data["q"].split()),
            # The skip links' target: the first result of the first column that has one.
            "first_side": "a" if found_a.results else "b",
        }
    )
    save = {h["side"]: h["save_params"] for h in ctx["heads"]}
    ctx["columns"] = [
        ("a", ctx["rows_a"], found_a, prof_a, live_a, save["a"]),
        ("b", ctx["rows_b"], found_b, prof_b, live_b, save["b"]),
    ]
    return ctx, 200


def _base_context(request, form) -> dict:
    return {
        "form": form,
        "part_colours": PART_COLOURS,
        "side_colours": SIDE_COLOURS,
        "can_judge": has_role(request.user, "editor"),
        "next_url": request.get_full_path(),
    }


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def compare(request):
    """``/search/compare/?q=&user_id=&a=&b=&k=`` plus each side's slider settings (B's:
    ``w_rel``, ``w_rec``, ``w_imp``, ``half_life``, ``k1``, ``bm25_b``, ``stemming``,
    ``match_mode``; A's the same prefixed ``a_``).

    htmx (a slider moved) gets the ``#results`` fragment, both columns recomputed, and pushes
    the URL; a reviewer's comparison never bumps ``access_count`` (it observes, as search).
    """
    form = CompareForm(request.GET, profiles=list(RankingProfile.objects.all()))
    ctx, status = _base_context(request, form), 200
    if form.is_valid():
        more, status = _compare_context(request, form)
        ctx.update(more)
    else:
        status = 400
    return render_page(request, "lab/compare.html", ctx, partial="results", status=status)


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def compare_explain(request):
    """One result's score taken apart (the compare page's state + ``side`` + ``memory_id``)."""
    form = CompareForm(request.GET, profiles=list(RankingProfile.objects.all()))
    ctx, status = _base_context(request, form), 200
    side = request.GET.get("side", "a")
    memory_id = request.GET.get("memory_id", "")
    if not form.is_valid() or side not in ("a", "b") or not form.cleaned_data["user_id"]:
        ctx["error"], status = "Choose a user, a query, a side (a or b) and a result.", 400
    else:
        data = form.cleaned_data
        prof = form.profile(side)[0]
        try:
            ctx["x"] = lab_explain.explain_hit(
                user_id=data["user_id"],
                query=data["q"],
                memory_id=memory_id,
                profile=prof,
                k=data["k"],
            )
        except ServiceError as exc:
            ctx["error"], status = exc.message, exc.status
        except store.RedisError:
            ctx["error"], status = "The search index (Redis) is unreachable.", 503
        back = {k: v for k, v in request.GET.items() if k not in ("side", "memory_id")}
        ctx.update({"side": side, "back_url": reverse("lab:compare") + "?" + urlencode(back)})
    return render_page(request, "lab/explain.html", ctx, partial="breakdown", status=status)


@require_POST
@role_required("editor")
def compare_save(request):
    """Save one side's settings (``side``: its profile plus sliders) as a new profile, then
    compare with it on that side."""
    form = CompareForm(request.POST, profiles=list(RankingProfile.objects.all()))
    back = (
        reverse("lab:compare")
        + "?"
        + urlencode(
            {k: v for k, v in request.POST.items() if k not in ("csrfmiddlewaretoken", "name")}
        )
    )
    if not form.is_valid():
        messages.error(
            request,
            "These settings are not valid: "
            + "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()),
        )
        return HttpResponseRedirect(back)
    side = request.POST.get("side", "b")
    if side not in SIDES:
        messages.error(request, f"Not saved: side must be one of {', '.join(SIDES)}.")
        return HttpResponseRedirect(back)
    tuned, _ = form.profile(side)
    try:
        profile = profile_services.profile_create(
            actor=request.user,
            name=request.POST.get("name", ""),
            reason="saved from the compare page",
            **{f: getattr(tuned, f) for f in profile_services.SETTINGS},
        )
    except ServiceError as exc:
        messages.error(request, f"Not saved: {exc.message}")
        return HttpResponseRedirect(back)
    messages.success(request, f"Saved profile {profile.name}.")
    # The other sides keep their sliders; the saved side now is the saved profile, untuned.
    others = {}
    for other in SIDES:
        prof, is_tuned = form.profile(other)
        if other != side and is_tuned:
            others[other] = prof
    state = form.state(tuned=others) | {side: profile.name}
    return HttpResponseRedirect(reverse("lab:compare") + "?" + urlencode(state))

