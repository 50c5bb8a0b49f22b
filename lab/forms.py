"""Forms of the ranking lab pages."""

from django import forms

from console.forms import NamespaceField
from lab import evaluation as lab_evaluation
from lab.models import EvalRun, QuerySet
from search import profile_services
from search.forms import RecallFilterFields
from search.models import MatchMode, Ranker, RankingProfile

K_DEFAULT, K_MAX = 10, 50

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


class CompareForm(RecallFilterFields):
    """The whole state of a comparison, as URL parameters (shareable, reloadable)."""

    user_id = NamespaceField(must_exist=True, label="User")
    q = forms.CharField(
        required=False,
        max_length=lab_evaluation.QUERY_MAX_CHARS,
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
        tuned = profile_services.profile_build(base, name=f"{base.name} (tuned)", **overrides)
        if all(getattr(tuned, f) == getattr(base, f) for f in profile_services.SETTINGS):
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
        for name in ("since", "until", "author", "tags"):
            if data.get(name):
                out[name] = str(data[name])
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
    """A narrow numeric input in ``low..high`` taking any value (step="any")."""
    return forms.FloatField(
        min_value=low, max_value=high, initial=initial, label=label,
        widget=forms.NumberInput(attrs={"step": "any", "class": "narrow"}),
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
    # Optional in a post (older clients of this form send none): absent = the default.
    temporal = forms.ChoiceField(
        choices=[("off", "off"), ("boost", "boost"), ("filter", "filter")], initial="off",
        label="Time in query", required=False)
    w_time = _number("w time", 0.5, 0, 10)
    w_semantic = _number("w semantic", 0.0, 0, 1)
    w_time.required = w_semantic.required = False
    is_default = forms.BooleanField(required=False, label="Default for recall")

    def settings(self) -> dict:
        out = {f: self.cleaned_data[f] for f in profile_services.SETTINGS}
        for f in ("temporal", "w_time", "w_semantic"):
            if out[f] in (None, ""):
                out[f] = self.fields[f].initial
        return out


class QuerySetForm(forms.Form):
    name = forms.CharField(max_length=100)
    user_id = NamespaceField(required=True, must_exist=True, label="User")
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
        max_value=lab_evaluation.K_MAX,
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


# --- judgments ------------------------------------------------------------------------------


class JudgmentFilterForm(forms.Form):
    user_id = NamespaceField(label="User")
    q = forms.CharField(required=False, max_length=lab_evaluation.QUERY_MAX_CHARS, label="Query")
    reviewer = forms.CharField(required=False, max_length=150)

