"""Forms of the search and synonyms pages."""

from django import forms
from django.core.exceptions import ValidationError

from console.forms import IdentifierField, NamespaceField, default_hint
from memories.errors import InvalidInput
from search.models import RankingProfile


class RecallFilterFields(forms.Form):
    """The recall filters of the search and compare pages: created on or after ``since``,
    before the day after ``until`` (whole days in the server's time zone), by ``author``,
    with every tag of ``tags`` (comma separated)."""

    since = forms.DateField(required=False, label="Since",
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until",
                            widget=forms.DateInput(attrs={"type": "date"}))
    author = forms.CharField(required=False, max_length=128, label="Author")
    tags = forms.CharField(required=False, max_length=500, label="Tags",
                           widget=forms.TextInput(attrs={"placeholder": "ops, urgent"}))

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and until < since:
            self.add_error("until", "Until must not be before since.")
        return data

    def filter_kwargs(self) -> dict:
        """``memory_search`` keyword arguments of the filters that are set."""
        import datetime as dt

        from django.utils import timezone

        data, out = self.cleaned_data, {}
        zone = timezone.get_current_timezone()
        if data.get("since"):
            out["since"] = dt.datetime.combine(data["since"], dt.time(), zone).timestamp()
        if data.get("until"):
            end = data["until"] + dt.timedelta(days=1)
            out["until"] = dt.datetime.combine(end, dt.time(), zone).timestamp()
        if data.get("author"):
            out["author"] = data["author"]
        tags = [t.strip() for t in (data.get("tags") or "").split(",") if t.strip()]
        if tags:
            out["tags"] = tags
        return out


class SearchForm(RecallFilterFields):
    # Suggested, not required to exist: an empty namespace answers "No results" (and the
    # page says when no such namespace exists), as recall does.
    user_id = NamespaceField(required=True, label="User")
    q = forms.CharField(
        required=False,
        max_length=1000,
        label="Query",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "what to recall"}),
    )
    profile = forms.ChoiceField(required=False, choices=())
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100,
        widget=forms.NumberInput(attrs={"class": "narrow", "placeholder": default_hint(10)}),
    )
    conversation_id = IdentifierField(name="conversation_id", label="Conversation")
    # Facts over time: what held at a moment (whenever it was recorded), or every match
    # whatever its validity. Blank and unticked: the facts that hold now.
    as_of = forms.DateTimeField(
        required=False, label="As of",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    include_superseded = forms.BooleanField(required=False, label="Include superseded")

    LIMIT_DEFAULT = 10

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        profiles = list(RankingProfile.objects.values_list("name", "is_default"))
        self.fields["profile"].choices = [
            (name, f"{name} (default)" if default else name) for name, default in profiles
        ]
        self.default_profile = next((name for name, default in profiles if default), "")
        self.fields["profile"].initial = self.default_profile
        if self.is_bound and not self.data.get("profile"):
            # A search without a profile uses the default: show that, not the first option.
            self.data = self.data.copy()
            self.data["profile"] = self.default_profile

    def clean_profile(self):
        return self.cleaned_data.get("profile") or self.default_profile or None

    def clean_limit(self):
        return self.cleaned_data.get("limit") or self.LIMIT_DEFAULT

    def validity_kwargs(self) -> dict:
        """``memory_search``'s ``as_of`` (epoch seconds) and ``include_superseded``."""
        data = self.cleaned_data
        return {"as_of": data["as_of"].timestamp() if data.get("as_of") else None,
                "include_superseded": bool(data.get("include_superseded"))}


# --- synonyms ---------------------------------------------------------------------------------

SYNONYMS_MAX_CHARS = 100_000


class SynonymsForm(forms.Form):
    text = forms.CharField(
        required=False,
        strip=False,
        max_length=SYNONYMS_MAX_CHARS,
        label="Synonym sets",
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "class": "code"}),
    )

    def clean_text(self):
        from search.analysis.synonyms import parse_lines

        text = self.cleaned_data["text"]
        try:
            parse_lines(text)  # the service parses again; this puts the error on the field
        except InvalidInput as exc:
            raise ValidationError(exc.message) from None
        return text

