"""Ranking lab pages: compare two profiles on one query (live sliders, explain, judgments),
profiles, query sets, evaluation runs and their comparison.

Every page works without JavaScript: state lives in the URL (GET forms), writes are POST
forms that redirect back. htmx only makes it faster (one view, two renderings: the page or
its ``#partial``). Charts are inline SVG whose geometry is computed here, server-side.
"""

import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap, retarget

from memories import lab, store
from memories.errors import InvalidInput, ServiceError
from memories.forms import add_service_error
from memories.models import EvalRun, Judgment, MatchMode, Memory, QuerySet, Ranker, RankingProfile
from memories.profiles import profile_default
from memories.roles import has_role
from memories.search import memory_search
from memories.validation import clean_identifier
from memories.views._common import (
    MESSAGES_TARGET,
    forbidden,
    paginate,
    render_page,
    role_required,
)

NAMESPACE_HINTS = 200
K_DEFAULT, K_MAX = 10, 50
# Colours of the two sides and of the score parts (also in static/lab/lab.css).
SIDE_COLOURS = {"a": "#2f5fd0", "b": "#d9822b"}
PART_COLOURS = {"relevance": "#2f5fd0", "recency": "#1f9d6b", "importance": "#e0a100"}
SERIES_COLOURS = [
    "#2f5fd0",
    "#d9822b",
    "#1f9d6b",
    "#8e44ad",
    "#c0392b",
    "#16a3b8",
    "#6b7a8f",
    "#b8860b",
]
METRIC_LABELS = {"ndcg": "nDCG@k", "precision": "P@k", "recall": "Recall@k", "mrr": "MRR"}

# URL parameter -> profile setting, for B's sliders (``b`` is profile B's name, so BM25's
# length normalisation travels as ``bm25_b``).
MATCH_MODES = [(m, m) for m in MatchMode.values]
RANKERS = [(r, r) for r in Ranker.values]
TUNE_PARAMS = {
    "w_rel": "w_relevance",
    "w_rec": "w_recency",
    "w_imp": "w_importance",
    "half_life": "half_life_hours",
    "k1": "k1",
    "bm25_b": "b",
    "stemming": "stemming",
    "match_mode": "match_mode",
}


def _namespaces():
    # Lazy: only the full page (its <datalist>) evaluates it.
    return (
        Memory.objects.values_list("user_id", flat=True)
        .distinct()
        .order_by("user_id")[:NAMESPACE_HINTS]
    )


def _safe_next(request, url: str | None, fallback: str) -> str:
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return fallback


def _fmt(value: float) -> str:
    """An SVG coordinate: one decimal, never localised."""
    return f"{value:.1f}"


# --- forms ----------------------------------------------------------------------------------


class CompareForm(forms.Form):
    """The whole state of a comparison, as URL parameters (shareable, reloadable)."""

    user_id = forms.CharField(
        required=False,
        max_length=128,
        strip=False,
        label="User",
        widget=forms.TextInput(attrs={"list": "namespaces"}),
    )
    q = forms.CharField(
        required=False,
        max_length=lab.QUERY_MAX_CHARS,
        label="Query",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "one query"}),
    )
    a = forms.ChoiceField(label="Profile A", choices=())
    b = forms.ChoiceField(label="Profile B", choices=())
    k = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=K_MAX,
        label="Top k",
        widget=forms.NumberInput(attrs={"class": "narrow"}),
    )
    # B's sliders: each, when present, overrides profile B (an unsaved profile).
    w_rel = forms.FloatField(required=False, min_value=0, max_value=1, label="Relevance weight")
    w_rec = forms.FloatField(required=False, min_value=0, max_value=1, label="Recency weight")
    w_imp = forms.FloatField(required=False, min_value=0, max_value=1, label="Importance weight")
    half_life = forms.FloatField(
        required=False, min_value=0.1, max_value=87600, label="Half-life (hours)"
    )
    k1 = forms.FloatField(required=False, min_value=0, max_value=5, label="k1")
    bm25_b = forms.FloatField(required=False, min_value=0, max_value=1, label="b")
    stemming = forms.ChoiceField(
        required=False, label="Stemming", choices=[("", "as profile"), ("on", "on"), ("off", "off")]
    )
    match_mode = forms.ChoiceField(
        required=False, label="Match mode", choices=[("", "as profile"), *MATCH_MODES]
    )

    def __init__(self, data, *, profiles: list[RankingProfile]):
        names = [p.name for p in profiles]
        default = next((p.name for p in profiles if p.is_default), names[0] if names else "")
        other = next((n for n in ("bm25", "keyword", *names) if n != default), default)
        super().__init__({"a": default, "b": other, "k": str(K_DEFAULT), **data.dict()})
        self.profiles = {p.name: p for p in profiles}
        choices = [(p.name, f"{p.name} (default)" if p.is_default else p.name) for p in profiles]
        self.fields["a"].choices = self.fields["b"].choices = choices

    def clean_user_id(self):
        value = self.cleaned_data["user_id"]
        if not value:
            return ""
        try:
            return clean_identifier(value, "user_id")
        except InvalidInput as exc:
            raise ValidationError(exc.message) from None

    def clean_k(self):
        return self.cleaned_data["k"] or K_DEFAULT

    def overrides(self) -> dict:
        """B's settings given by sliders (only those present)."""
        out = {}
        for param, setting in TUNE_PARAMS.items():
            value = self.cleaned_data.get(param)
            if value in (None, ""):
                continue
            out[setting] = value == "on" if param == "stemming" else value
        return out

    def profile_a(self) -> RankingProfile:
        return self.profiles[self.cleaned_data["a"]]

    def profile_b(self) -> tuple[RankingProfile, bool]:
        """Profile B with the sliders applied, and whether they changed anything."""
        base = self.profiles[self.cleaned_data["b"]]
        overrides = self.overrides()
        if not overrides:
            return base, False
        tuned = lab.profile_build(base, name=f"{base.name} (tuned)", **overrides)
        if all(getattr(tuned, f) == getattr(base, f) for f in lab.SETTINGS):
            return base, False
        return tuned, True

    def state(self, *, tuned_from: RankingProfile | None = None) -> dict[str, str]:
        """The URL parameters of this comparison (with B's settings when tuned)."""
        data = self.cleaned_data
        out = {
            "user_id": data["user_id"],
            "q": data["q"],
            "a": data["a"],
            "b": data["b"],
            "k": str(data["k"]),
        }
        if tuned_from is not None:
            out.update(tune_params(tuned_from))
        return out


def tune_params(profile: RankingProfile) -> dict[str, str]:
    """A profile's slider settings as URL parameters."""
    out = {}
    for param, setting in TUNE_PARAMS.items():
        value = getattr(profile, setting)
        if param == "stemming":
            out[param] = "on" if value else "off"
        elif isinstance(value, float):
            out[param] = f"{value:g}"
        else:
            out[param] = str(value)
    return out


def _number(label: str, initial: float, low: float, high: float) -> forms.FloatField:
    """A narrow numeric input in ``low..high`` stepping by 0.05."""
    return forms.FloatField(
        min_value=low, max_value=high, initial=initial, label=label,
        widget=forms.NumberInput(attrs={"step": "0.05", "class": "narrow"}),
    )


class ProfileForm(forms.Form):
    name = forms.CharField(max_length=64)
    ranker = forms.ChoiceField(choices=RANKERS)
    k1 = _number("k1", 1.2, 0, 5)
    b = _number("b", 0.75, 0, 1)
    w_relevance = _number("w relevance", 1.0, 0, 1)
    w_recency = _number("w recency", 0.0, 0, 1)
    w_importance = _number("w importance", 0.0, 0, 1)
    half_life_hours = forms.FloatField(
        min_value=0.1,
        max_value=87600,
        initial=720,
        label="Half-life (h)",
        widget=forms.NumberInput(attrs={"class": "narrow"}),
    )
    recency_from = forms.ChoiceField(
        choices=[("created_at", "created_at"), ("accessed_at", "accessed_at")]
    )
    match_mode = forms.ChoiceField(choices=MATCH_MODES)
    stemming = forms.BooleanField(required=False)
    synonyms = forms.BooleanField(required=False)
    context = forms.BooleanField(required=False, label="Context field")
    is_default = forms.BooleanField(required=False, label="Default for recall")

    def settings(self) -> dict:
        return {f: self.cleaned_data[f] for f in lab.SETTINGS}


class QuerySetForm(forms.Form):
    name = forms.CharField(max_length=100)
    user_id = forms.CharField(
        max_length=128,
        strip=False,
        label="User",
        widget=forms.TextInput(attrs={"list": "namespaces"}),
    )
    queries = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}), help_text="One query per line."
    )

    def query_list(self) -> list[str]:
        return [line for line in self.cleaned_data["queries"].splitlines() if line.strip()]


class RunForm(forms.Form):
    name = forms.CharField(max_length=200)
    query_set = forms.ModelChoiceField(queryset=QuerySet.objects.all(), label="Query set")
    profiles = forms.MultipleChoiceField(choices=(), widget=forms.CheckboxSelectMultiple)
    k = forms.IntegerField(
        min_value=1,
        max_value=lab.K_MAX,
        initial=10,
        widget=forms.NumberInput(attrs={"class": "narrow"}),
    )
    reviewer = forms.CharField(
        required=False, max_length=150, help_text="Blank: every reviewer's grades, averaged."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["profiles"].choices = [
            (n, n) for n in RankingProfile.objects.values_list("name", flat=True)
        ]


class RunCompareForm(forms.Form):
    a = forms.ModelChoiceField(
        queryset=EvalRun.objects.defer("per_query", "unjudged"), label="Run A"
    )
    b = forms.ModelChoiceField(
        queryset=EvalRun.objects.defer("per_query", "unjudged"), label="Run B"
    )


# --- charts (inline SVG geometry) -------------------------------------------------------------


@dataclass
class Bar:
    x: str
    y: str
    w: str
    h: str
    colour: str
    title: str


@dataclass
class Chart:
    width: int
    height: int
    bars: list[Bar] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    x_labels: list[dict] = field(default_factory=list)
    y_ticks: list[dict] = field(default_factory=list)
    legend: list[dict] = field(default_factory=list)
    plot: dict = field(default_factory=dict)


def stacked_bar(parts: dict[str, float], top: float, width: float = 150) -> list[Bar]:
    """One result's score as relevance / recency / importance segments, scaled so the
    column's best score fills ``width``."""
    out, x = [], 0.0
    for name in ("relevance", "recency", "importance"):
        w = width * parts[name] / top if top > 0 else 0.0
        if w > 0:
            out.append(
                Bar(_fmt(x), "0", _fmt(w), "12", PART_COLOURS[name], f"{name} {parts[name]:.4f}")
            )
        x += w
    return out


def score_chart(sides: list[tuple[str, str, list[float]]], k: int) -> Chart:
    """Score against rank for each side (label, colour, scores best first), each scaled to
    its own best score: BM25 and hybrid scores live on different scales, their shapes
    compare."""
    chart = Chart(width=560, height=190)
    left, right, top, bottom = 44, 14, 12, 30
    pw, ph = chart.width - left - right, chart.height - top - bottom
    chart.plot = {"x": left, "y": top, "w": pw, "h": ph, "bottom": top + ph, "right": left + pw}
    span = max(k - 1, 1)

    def x(rank):
        return left + (rank - 1) * pw / span

    for rank in range(1, k + 1):
        if k <= 12 or rank in (1, k) or rank % 5 == 0:
            chart.x_labels.append({"x": _fmt(x(rank)), "text": str(rank)})
    for value in (0.0, 0.5, 1.0):
        chart.y_ticks.append({"y": _fmt(top + (1 - value) * ph), "text": f"{value:g}"})
    for label, colour, scores in sides:
        best = max(scores, default=0.0)
        points = [
            {
                "x": _fmt(x(r)),
                "y": _fmt(top + (1 - (s / best if best > 0 else 0)) * ph),
                "title": f"{label} #{r}: {s:.4f}",
            }
            for r, s in enumerate(scores, start=1)
        ]
        chart.lines.append(
            {
                "label": label,
                "colour": colour,
                "points": points,
                "polyline": " ".join(f"{p['x']},{p['y']}" for p in points),
            }
        )
        chart.legend.append({"label": label, "colour": colour})
    return chart


def metric_bars(series: list[tuple[str, dict]]) -> Chart:
    """Grouped bars, one group per metric (0..1), one bar per series (label, metrics)."""
    chart = Chart(width=600, height=210)
    left, right, top, bottom = 40, 10, 12, 30
    pw, ph = chart.width - left - right, chart.height - top - bottom
    chart.plot = {"x": left, "y": top, "w": pw, "h": ph, "bottom": top + ph, "right": left + pw}
    group = pw / len(METRIC_LABELS)
    n = max(len(series), 1)
    bar = min(34.0, (group - 18) / n)
    for gi, (metric, label) in enumerate(METRIC_LABELS.items()):
        start = left + gi * group + (group - bar * n) / 2
        chart.x_labels.append({"x": _fmt(left + gi * group + group / 2), "text": label})
        for si, (name, values) in enumerate(series):
            value = values.get(metric) or 0.0
            h = ph * max(0.0, min(1.0, value))
            chart.bars.append(
                Bar(
                    _fmt(start + si * bar + 1),
                    _fmt(top + ph - h),
                    _fmt(bar - 2),
                    _fmt(h),
                    SERIES_COLOURS[si % len(SERIES_COLOURS)],
                    f"{name} · {label} {value:.3f}",
                )
            )
    for value in (0.0, 0.25, 0.5, 0.75, 1.0):
        chart.y_ticks.append({"y": _fmt(top + (1 - value) * ph), "text": f"{value:g}"})
    chart.legend = [
        {"label": name, "colour": SERIES_COLOURS[i % len(SERIES_COLOURS)]}
        for i, (name, _) in enumerate(series)
    ]
    return chart


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
        parts = lab.score_parts(hit)
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


def sliders(profile: RankingProfile) -> list[dict]:
    """B's range inputs, each starting at the profile's value (ranges widen to hold it)."""
    specs = [
        ("w_rel", "Relevance w", "w_relevance", 0, 1, 0.05),
        ("w_rec", "Recency w", "w_recency", 0, 1, 0.05),
        ("w_imp", "Importance w", "w_importance", 0, 1, 0.05),
        ("half_life", "Half-life h", "half_life_hours", 1, 2160, 1),
        ("k1", "k1", "k1", 0, 3, 0.05),
        ("bm25_b", "b", "b", 0, 1, 0.05),
    ]
    out = []
    for name, label, setting, low, high, step in specs:
        value = getattr(profile, setting)
        out.append(
            {
                "name": name,
                "label": label,
                "min": f"{min(low, value):g}",
                "max": f"{max(high, value):g}",
                "step": f"{step:g}",
                "value": f"{value:g}",
            }
        )
    return out


def _compare_context(request, form) -> tuple[dict, int]:
    """Run both rankings and compare them; ``(context, status)``."""
    data = form.cleaned_data
    prof_a = form.profile_a()
    prof_b, tuned = form.profile_b()
    state = form.state(tuned_from=prof_b if tuned else None)
    ctx = {
        "prof_a": prof_a,
        "prof_b": prof_b,
        "tuned": tuned,
        "state": state,
        "base_b": form.profiles[data["b"]],
        "k": data["k"],
        "save_params": state | tune_params(prof_b),
        "sliders": sliders(prof_b),
        "hidden_state": form.state(),
        "match_modes": MATCH_MODES,
        "reset_url": reverse("lab:compare") + "?" + urlencode(form.state()),
    }
    if not data["user_id"] or not data["q"].strip():
        return ctx, 200
    now = time.time()
    try:
        found_a = memory_search(
            user_id=data["user_id"], query=data["q"], limit=data["k"], profile=prof_a, now=now
        )
        found_b = memory_search(
            user_id=data["user_id"], query=data["q"], limit=data["k"], profile=prof_b, now=now
        )
    except store.RedisError:
        ctx["error"] = (
            "The search index (Redis) is unreachable, so the comparison cannot run. "
            "Memories are safe in the database; try again once Redis is back."
        )
        return ctx, 503
    ids_a = [h.memory_id for h in found_a.results]
    ids_b = [h.memory_id for h in found_b.results]
    diff = lab.compare_lists(ids_a, ids_b, data["k"])
    grades = lab.judgment_table(
        user_id=data["user_id"], query=data["q"], memory_ids=set(ids_a) | set(ids_b)
    )
    username = request.user.get_username()
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
        }
    )
    ctx["columns"] = [("a", ctx["rows_a"], found_a, prof_a), ("b", ctx["rows_b"], found_b, prof_b)]
    return ctx, 200


def _base_context(request, form) -> dict:
    return {
        "form": form,
        "namespaces": _namespaces(),
        "part_colours": PART_COLOURS,
        "side_colours": SIDE_COLOURS,
        "can_judge": has_role(request.user, "editor"),
        "next_url": request.get_full_path(),
    }


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def compare(request):
    """``/search/compare/?q=&user_id=&a=&b=&k=`` plus B's slider settings (``w_rel``,
    ``w_rec``, ``w_imp``, ``half_life``, ``k1``, ``bm25_b``, ``stemming``, ``match_mode``).

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
        prof = form.profile_a() if side == "a" else form.profile_b()[0]
        try:
            ctx["x"] = lab.explain_hit(
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
    """Save B's settings (a profile plus sliders) as a new profile, then compare with it."""
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
    prof_b, _ = form.profile_b()
    try:
        profile = lab.profile_create(
            actor=request.user,
            name=request.POST.get("name", ""),
            reason="saved from the compare page",
            **{f: getattr(prof_b, f) for f in lab.SETTINGS},
        )
    except ServiceError as exc:
        messages.error(request, f"Not saved: {exc.message}")
        return HttpResponseRedirect(back)
    messages.success(request, f"Saved profile {profile.name}.")
    state = form.state() | {"b": profile.name}
    return HttpResponseRedirect(reverse("lab:compare") + "?" + urlencode(state))


# --- judgments ------------------------------------------------------------------------------


class JudgmentFilterForm(forms.Form):
    user_id = forms.CharField(required=False, max_length=128, label="User")
    q = forms.CharField(required=False, max_length=lab.QUERY_MAX_CHARS, label="Query")
    reviewer = forms.CharField(required=False, max_length=150)


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@role_required("viewer")
def judgments(request):
    """GET: judgments, filterable. POST (editor): grade a result 0-3 as the current user;
    htmx gets the grade widget back for every copy of that result on the page."""
    if request.method == "POST":
        return _judge(request)
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
    pager = paginate(request, rows, per_page=50, params=params, base=reverse("lab:judgments"))
    return render_page(
        request,
        "lab/judgments.html",
        {**_lab_nav("judgments"), "form": form, "pager": pager},
        partial="rows",
    )


def _judge(request):
    if not has_role(request.user, "editor"):
        return forbidden(request, "Grading results needs the editor role.")
    fallback = reverse("lab:compare")
    next_url = _safe_next(request, request.POST.get("next"), fallback)
    memory_id = request.POST.get("memory_id", "")
    try:
        grade = int(request.POST.get("grade", ""))
    except ValueError:
        grade = -1
    try:
        judgment, _ = lab.judgment_set(
            actor=request.user,
            user_id=request.POST.get("user_id"),
            query=request.POST.get("q", ""),
            memory_id=memory_id,
            grade=grade,
        )
    except ServiceError as exc:
        if request.htmx:
            response = render(
                request, "_forbidden.html", {"message": exc.message}, status=exc.status
            )
            return reswap(retarget(response, MESSAGES_TARGET), "innerHTML")
        messages.error(request, f"Not recorded: {exc.message}")
        return HttpResponseRedirect(next_url)
    if not request.htmx:
        messages.success(request, f"Graded {memory_id} {grade} for “{judgment.query}”.")
        return HttpResponseRedirect(next_url)
    table = lab.judgment_table(
        user_id=judgment.user_id, query=judgment.query, memory_ids=[memory_id]
    ).get(memory_id, {})
    username = request.user.get_username()
    return render(
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


# --- lab home and profiles --------------------------------------------------------------------


def _lab_nav(here: str) -> dict:
    return {"lab_here": here}


@require_GET
@role_required("viewer")
def lab_home(request):
    return render_page(
        request,
        "lab/home.html",
        {
            **_lab_nav("home"),
            "profiles": RankingProfile.objects.all(),
            "querysets": QuerySet.objects.annotate(n_runs=Count("runs")),
            "runs": EvalRun.objects.defer("per_query", "unjudged").select_related("query_set")[:10],
            "n_judgments": Judgment.objects.count(),
            "n_reviewers": Judgment.objects.values("reviewer").distinct().count(),
        },
    )


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def profile_list(request):
    """GET: every profile. POST (editor): create one."""
    form = ProfileForm(
        request.POST if request.method == "POST" else None,
        initial={"ranker": "bm25", "match_mode": "any", "recency_from": "created_at"},
    )
    if not has_role(request.user, "admin"):
        form.fields["is_default"].disabled = True  # only admins choose the default
    status = 200
    if request.method == "POST":
        if not has_role(request.user, "editor"):
            return forbidden(request, "Creating a profile needs the editor role.")
        if form.is_valid():
            try:
                profile = lab.profile_create(
                    actor=request.user,
                    name=form.cleaned_data["name"],
                    is_default=form.cleaned_data["is_default"],
                    **form.settings(),
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                messages.success(request, f"Created profile {profile.name}.")
                return HttpResponseRedirect(reverse("lab:profile", args=[profile.name]))
        else:
            status = 400
    return render_page(
        request,
        "lab/profiles.html",
        {
            **_lab_nav("profiles"),
            "form": form,
            "profiles": RankingProfile.objects.all(),
            "can_create": has_role(request.user, "editor"),
            "is_admin": has_role(request.user, "admin"),
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def profile_detail(request, name: str):
    """GET: settings and versions. POST: change it (its creator or an admin)."""
    profile = RankingProfile.objects.filter(name=name).first()
    if profile is None:
        return render(request, "404.html", {"message": f"No profile named {name!r}."}, status=404)
    can_edit = lab.can_edit_profile(request.user, profile)
    is_admin = has_role(request.user, "admin")
    initial = {
        "name": profile.name,
        "is_default": profile.is_default,
        **{f: getattr(profile, f) for f in lab.SETTINGS},
    }
    form = ProfileForm(request.POST if request.method == "POST" else None, initial=initial)
    status = 200
    if request.method == "POST":
        if not can_edit:
            return forbidden(request, "Only the profile's creator or an admin may change it.")
        if form.is_valid():
            changes = form.settings()
            if is_admin:
                changes["is_default"] = form.cleaned_data["is_default"]
            try:
                profile = lab.profile_update(
                    actor=request.user, name=name, new_name=form.cleaned_data["name"], **changes
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                messages.success(request, f"Saved profile {profile.name}.")
                return HttpResponseRedirect(reverse("lab:profile", args=[profile.name]))
        else:
            status = 400
    if profile.builtin:
        for f in ("name", *lab.SETTINGS):
            form.fields[f].disabled = True
    if not is_admin:
        form.fields["is_default"].disabled = True
    return render_page(
        request,
        "lab/profile_detail.html",
        {
            **_lab_nav("profiles"),
            "profile": profile,
            "form": form,
            "can_edit": can_edit,
            "is_admin": is_admin,
            "versions": list(reversed(lab.profile_versions(profile))),
            "settings": lab.SETTINGS,
        },
        status=status,
    )


@require_POST
@role_required("admin")
def profile_delete(request, name: str):
    try:
        lab.profile_delete(actor=request.user, name=name, reason=request.POST.get("reason", ""))
    except ServiceError as exc:
        messages.error(request, f"Not deleted: {exc.message}")
        return HttpResponseRedirect(reverse("lab:profiles"))
    messages.success(request, f"Deleted profile {name}.")
    return HttpResponseRedirect(reverse("lab:profiles"))


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
                qs = lab.queryset_create(
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
            **_lab_nav("querysets"),
            "form": form,
            "namespaces": _namespaces(),
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
                qs = lab.queryset_update(
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
            **_lab_nav("querysets"),
            "qs": qs,
            "rows": rows,
            "form": form,
            "can_edit": can_edit,
            "namespaces": _namespaces(),
            "runs": qs.runs.defer("per_query", "unjudged")[:20],
        },
        status=status,
    )


# --- runs ---------------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required("viewer")
def run_list(request):
    """GET: runs and the form for a new one. POST (editor): evaluate and save a run."""
    form = RunForm(
        request.POST if request.method == "POST" else None,
        initial={"k": 10, "query_set": request.GET.get("query_set")},
    )
    status = 200
    if request.method == "POST":
        if not has_role(request.user, "editor"):
            return forbidden(request, "Starting a run needs the editor role.")
        if form.is_valid():
            data = form.cleaned_data
            try:
                run = lab.run_create(
                    actor=request.user,
                    name=data["name"],
                    query_set=data["query_set"],
                    profiles=data["profiles"],
                    k=data["k"],
                    reviewer=data["reviewer"].strip(),
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
            **_lab_nav("runs"),
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
            + urlencode({"user_id": u["user_id"], "q": u["query"], "a": a, "b": b, "k": run.k}),
        }
        for u in run.unjudged[:200]
    ]
    return render_page(
        request,
        "lab/run_detail.html",
        {
            **_lab_nav("runs"),
            "run": run,
            "chart": metric_bars(_series(run)),
            "judged_any": any(m.get("queries") for m in run.metrics.values()),
            "names": names,
            "query_rows": query_rows,
            "unjudged": unjudged,
            "unjudged_total": len(run.unjudged),
            "metric_labels": METRIC_LABELS,
            "settings": lab.SETTINGS,
            "other_runs": EvalRun.objects.exclude(pk=run.pk).defer("per_query", "unjudged")[:50],
        },
    )


@require_GET
@role_required("viewer")
def run_compare(request):
    form = RunCompareForm(request.GET or None, initial=_newest_two())
    ctx = {**_lab_nav("runs"), "form": form, "metric_labels": METRIC_LABELS}
    status = 200
    if request.GET:
        if form.is_valid():
            a, b = form.cleaned_data["a"], form.cleaned_data["b"]
            a = EvalRun.objects.get(pk=a.pk)  # with its per-query rows
            b = EvalRun.objects.get(pk=b.pk)
            cmp = lab.run_compare(a, b)
            ctx.update(
                {
                    "a": a,
                    "b": b,
                    "cmp": cmp,
                    "chart": metric_bars(_series(a, "A · ") + _series(b, "B · ")),
                    "judged_any": any(m.get("queries") for r in (a, b) for m in r.metrics.values()),
                }
            )
        else:
            status = 400
    return render_page(request, "lab/run_compare.html", ctx, status=status)
