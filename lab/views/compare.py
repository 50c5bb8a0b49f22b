"""Compare two to four ranking profiles side by side on one query; explain a hit; save one
side as a profile."""

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
    """Run every compared side's ranking (A, B, and C and D when named) and compare each
    with A; ``(context, status)``."""
    data = form.cleaned_data
    sides = form.sides()
    profiles = {side: form.profile(side) for side in sides}
    tuned = {side: prof for side, (prof, is_tuned) in profiles.items() if is_tuned}
    state = form.state(tuned=tuned)
    prof_a, prof_b = profiles["a"][0], profiles["b"][0]
    ctx = {
        "prof_a": prof_a,
        "prof_b": prof_b,
        "state": state,
        "k": data["k"],
        "sides": sides,
        # The next side "Add profile" opens (None at four).
        "next_side": SIDES[len(sides)] if len(sides) < len(SIDES) else None,
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
        found = {
            side: memory_search(
                user_id=data["user_id"], query=data["q"], limit=data["k"], profile=prof,
                now=now, **filters,
            )
            for side, (prof, _) in profiles.items()
        }
    except store.RedisError:
        ctx["error"] = (
            "The search index (Redis) is unreachable, so the comparison cannot run. "
            "Memories are safe in the database; try again once Redis is back."
        )
        return ctx, 503
    ids = {side: [h.memory_id for h in f.results] for side, f in found.items()}
    # Each other side against A: B's for the overlap strip, C's and D's in their columns.
    diffs = {
        side: lab_evaluation.compare_lists(ids["a"], ids[side], data["k"])
        for side in sides if side != "a"
    }
    diff = diffs["b"]
    grades = lab_judgments.judgment_table(
        user_id=data["user_id"], query=data["q"], memory_ids=set().union(*ids.values())
    )
    username = request.user.get_username()
    gains = lab_judgments.judgment_gains(user_id=data["user_id"], query=data["q"])
    save = {h["side"]: h["save_params"] for h in ctx["heads"]}
    columns = []
    for side, (prof, _) in profiles.items():
        rows = _column(
            side, found[side], state,
            other=diff["rank_b"] if side == "a" else None,
            moves=diffs[side]["moves"] if side != "a" else None,
            grades=grades, username=username,
        )
        columns.append(
            {
                "side": side,
                "rows": rows,
                "found": found[side],
                "prof": prof,
                "live": lab_evaluation.live_figures(ids[side], gains, data["k"]),
                "save_params": save[side],
                "diff": diffs.get(side),
                "new_count": sum(
                    1 for m in diffs[side]["moves"].values() if m["kind"] == "new"
                ) if side != "a" else 0,
            }
        )
    ctx.update(
        {
            "found_a": found["a"],
            "found_b": found["b"],
            "diff": diff,
            "rows_a": columns[0]["rows"],
            "rows_b": columns[1]["rows"],
            "new_count": columns[1]["new_count"],
            "columns": columns,
            "chart": score_chart(
                [
                    (f"{side.upper()} · {prof.name}", SIDE_COLOURS[side],
                     [h.score for h in found[side].results])
                    for side, (prof, _) in profiles.items()
                ],
                data["k"],
            ),
            "judge_query": " ".join(data["q"].split()),
            # The skip links' target: the first result of the first column that has one.
            "first_side": next((s for s in sides if found[s].results), "a"),
        }
    )
    return ctx, 200


def _rearranged(request, form):
    """The comparison with a profile added (``add``: the next side, showing the first
    profile not yet compared) or one removed (``remove``: a side, while more than two are
    compared; the sides after it move up a letter, sliders and all), or None when the
    request asks neither. Both come from the tune form's buttons, with every slider."""
    data = form.cleaned_data
    sides = form.sides()
    # (profile name, profile with its sliders, tuned?) of each side kept, in column order.
    kept = [(data[s], *form.profile(s)) for s in sides]
    if request.GET.get("add") and len(sides) < len(SIDES):
        shown = {data[s] for s in sides}
        name = next((n for n in form.profiles if n not in shown), data["a"])
        kept.append((name, form.profiles[name], False))
    elif request.GET.get("remove") in sides and len(sides) > 2:
        del kept[sides.index(request.GET["remove"])]
    else:
        return None
    state = {key: value for key, value in form.state().items() if key not in SIDES}
    for letter, (name, prof, is_tuned) in zip(SIDES, kept, strict=False):
        state[letter] = name
        if is_tuned:
            state |= tune_params(prof, letter)
    return HttpResponseRedirect(reverse("lab:compare") + "?" + urlencode(state))


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
    """``/search/compare/?q=&user_id=&a=&b=&k=`` (and ``c=``, ``d=`` for a third and fourth
    profile) plus each side's slider settings (B's: ``w_rel``, ``w_rec``, ``w_imp``,
    ``half_life``, ``k1``, ``bm25_b``, ``stemming``, ``match_mode``; A's, C's and D's the
    same prefixed ``a_``, ``c_``, ``d_``). ``add`` / ``remove`` (the tune form's buttons)
    redirect to the comparison with a side added or removed.

    htmx (a slider moved) gets the ``#results`` fragment, every column recomputed, and pushes
    the URL; a reviewer's comparison never bumps ``access_count`` (it observes, as search).
    """
    form = CompareForm(request.GET, profiles=list(RankingProfile.objects.all()))
    ctx, status = _base_context(request, form), 200
    if form.is_valid():
        moved = _rearranged(request, form)
        if moved is not None:
            return moved
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
    if (not form.is_valid() or side not in form.sides() or not form.cleaned_data["user_id"]):
        ctx["error"], status = "Choose a user, a query, a compared side (a to d) and a result.", 400
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
    if side not in form.sides():
        messages.error(request, f"Not saved: side must be one of {', '.join(form.sides())}.")
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
    for other in form.sides():
        prof, is_tuned = form.profile(other)
        if other != side and is_tuned:
            others[other] = prof
    state = form.state(tuned=others) | {side: profile.name}
    return HttpResponseRedirect(reverse("lab:compare") + "?" + urlencode(state))

