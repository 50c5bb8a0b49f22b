"""Forms of the ranking lab pages."""

from django import forms

from console.forms import NamespaceField
from lab import evaluation as lab_evaluation
from lab.judgments import AGENT_FEEDBACK
from lab.models import EvalRun, QuerySet
from search import profile_services
from search.forms import RecallFilterFields
from search.models import MatchMode, Ranker, RankingProfile

K_DEFAULT, K_MAX = 10, 50

MATCH_MODES = [(m, m) for m in MatchMode.values]

RANKERS = [(r, r) for r in Ranker.values]

# The compared profiles, in column order; each one is tunable with its own sliders. A and B
# are always compared; C and D join when their parameter names a profile.
SIDES = ("a", "b", "c", "d")
EXTRA_SIDES = ("c", "d")

# URL parameter -> profile setting, for a side's sliders (``b`` is profile B's name, so
# BM25's length normalisation travels as ``bm25_b``).
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


def tune_param(side: str, param: str) -> str:
    """A side's URL parameter for a slider: B's keep their names from when only B was
    tunable (so links shared then still open the same comparison); other sides' are
    prefixed (``a_w_rel``)."""
    return param if side == "b" else f"{side}_{param}"


def _tune_fields(side: str) -> dict[str, forms.Field]:
    """One side's sliders: each, when present, overrides that side's profile."""
    name = side.upper()
    fields = {
        "w_rel": forms.FloatField(min_value=0, max_value=1, label=f"{name} relevance weight"),
        "w_rec": forms.FloatField(min_value=0, max_value=1, label=f"{name} recency weight"),
        "w_imp": forms.FloatField(min_value=0, max_value=1, label=f"{name} importance weight"),
        "half_life": forms.FloatField(
            min_value=0.1, max_value=87600, label=f"{name} half-life (hours)"
        ),
        "k1": forms.FloatField(min_value=0, max_value=5, label=f"{name} k1"),
        "bm25_b": forms.FloatField(min_value=0, max_value=1, label=f"{name} b"),
        "stemming": forms.ChoiceField(
            label=f"{name} stemming", choices=[("", "as profile"), ("on", "on"), ("off", "off")]
        ),
        "match_mode": forms.ChoiceField(
            label=f"{name} match mode", choices=[("", "as profile"), *MATCH_MODES]
        ),
    }
    for field in fields.values():
        field.required = False
    return {tune_param(side, param): field for param, field in fields.items()}


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
    c = forms.ChoiceField(label="Profile C", choices=(), required=False)
    d = forms.ChoiceField(label="Profile D", choices=(), required=False)
    k = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=K_MAX,
        label="Top k",
        widget=forms.NumberInput(attrs={"class": "narrow"}),
    )
    # The query set the query comes from (its page links here): the page shows the query's
    # note and steps to the set's other queries.
    query_set = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    def __init__(self, data, *, profiles: list[RankingProfile]):
        names = [p.name for p in profiles]
        default = next((p.name for p in profiles if p.is_default), names[0] if names else "")
        other = next((n for n in ("bm25", "keyword", *names) if n != default), default)
        super().__init__({"a": default, "b": other, "k": str(K_DEFAULT), **data.dict()})
        for side in SIDES:
            self.fields.update(_tune_fields(side))
        self.profiles = {p.name: p for p in profiles}
        choices = [(p.name, f"{p.name} (default)" if p.is_default else p.name) for p in profiles]
        self.fields["a"].choices = self.fields["b"].choices = choices
        self.fields["c"].choices = self.fields["d"].choices = [("", "none"), *choices]

    def clean_k(self):
        return self.cleaned_data["k"] or K_DEFAULT

    def clean(self):
        data = super().clean()
        # D without C: D is the third column, so it is C (its sliders are D's no more).
        if data.get("d") and not data.get("c"):
            data["c"], data["d"] = data["d"], ""
        return data

    def sides(self) -> list[str]:
        """The compared sides, in column order: A, B, then C and D when named."""
        return ["a", "b", *(s for s in EXTRA_SIDES if self.cleaned_data.get(s))]

    def overrides(self, side: str) -> dict:
        """A side's settings given by its sliders (only those present)."""
        out = {}
        for param, setting in TUNE_PARAMS.items():
            value = self.cleaned_data.get(tune_param(side, param))
            if value in (None, ""):
                continue
            out[setting] = value == "on" if param == "stemming" else value
        return out

    def profile(self, side: str) -> tuple[RankingProfile, bool]:
        """A side's profile with its sliders applied, and whether they changed anything."""
        base = self.profiles[self.cleaned_data[side]]
        overrides = self.overrides(side)
        if not overrides:
            return base, False
        tuned = profile_services.profile_build(base, name=f"{base.name} (tuned)", **overrides)
        if all(getattr(tuned, f) == getattr(base, f) for f in profile_services.SETTINGS):
            return base, False
        return tuned, True

    def state(self, *, tuned: dict[str, RankingProfile] | None = None) -> dict[str, str]:
        """The URL parameters of this comparison, with the sliders of each side in
        ``tuned`` (``{side: its tuned profile}``)."""
        data = self.cleaned_data
        out = {
            "user_id": data["user_id"],
            "q": data["q"],
            "a": data["a"],
            "b": data["b"],
            **{side: data[side] for side in EXTRA_SIDES if data.get(side)},
            "k": str(data["k"]),
        }
        for name in ("since", "until", "author", "tags", "query_set"):
            if data.get(name):
                out[name] = str(data[name])
        for side, profile in (tuned or {}).items():
            out.update(tune_params(profile, side))
        return out


def tune_params(profile: RankingProfile, side: str) -> dict[str, str]:
    """A profile's slider settings as one side's URL parameters."""
    out = {}
    for param, setting in TUNE_PARAMS.items():
        value = getattr(profile, setting)
        if param == "stemming":
            value = "on" if value else "off"
        elif isinstance(value, float):
            value = f"{value:g}"
        out[tune_param(side, param)] = str(value)
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
    # Optional in a post (older clients of this form send none): absent = judgments.
    rater = forms.ChoiceField(
        required=False, label="Gains from", initial="judgments",
        choices=[("judgments", "Human judgments"), ("agent", "Agent feedback")],
        help_text="Agent feedback: the grades agents gave recalled results of these queries "
                  "(per result, the mean of their latest grades, rounded).")
    reviewer = forms.CharField(
        required=False, max_length=150,
        help_text="Human judgments: one reviewer's, or blank for every reviewer's, averaged."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["profiles"].choices = [
            (n, n) for n in RankingProfile.objects.values_list("name", flat=True)
        ]

    def reviewer_name(self) -> str:
        """The run's ``reviewer``: ``AGENT_FEEDBACK`` for the rater agent feedback."""
        if self.cleaned_data.get("rater") == "agent":
            return AGENT_FEEDBACK
        return self.cleaned_data["reviewer"].strip()


class FeedbackQuerySetForm(forms.Form):
    """A query set of a namespace's logged queries that received recall feedback."""

    name = forms.CharField(max_length=100)
    user_id = NamespaceField(required=True, must_exist=True, label="User")
    limit = forms.IntegerField(
        required=False, min_value=1, max_value=lab_evaluation.QUERIES_MAX,
        label="At most", help_text="Queries, most graded first (blank: "
                                   f"{lab_evaluation.QUERIES_MAX}).",
        widget=forms.NumberInput(attrs={"class": "narrow"}))
    # Tells this form's post from the query list's on the same page.
    from_feedback = forms.CharField(widget=forms.HiddenInput, initial="1")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("prefix", "fb")
        super().__init__(*args, **kwargs)


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



class JudgmentImportForm(forms.Form):
    """A CSV of judgments (``lab.judgments.CSV_COLUMNS``), UTF-8."""

    MAX_BYTES = 5 * 1024 * 1024

    file = forms.FileField(label="CSV file", help_text=(
        "Columns namespace, query, memory_id, grade, rater, updated_at (as the export "
        "writes them); rater blank = you; updated_at is not imported."))

    def clean_file(self) -> str:
        """The file's text (a byte-order mark dropped)."""
        upload = self.cleaned_data["file"]
        if upload.size > self.MAX_BYTES:
            raise forms.ValidationError(f"A file takes at most {self.MAX_BYTES // 1024 // 1024} MB.")
        try:
            return upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError(f"The file is not UTF-8 text (byte {exc.start}).") from exc
