"""Forms of the search and synonyms pages."""

from django import forms
from django.core.exceptions import ValidationError

from console.forms import _identifier, _IdentifierField
from memories.errors import InvalidInput
from search.models import RankingProfile


class SearchForm(forms.Form):
    user_id = forms.CharField(
        max_length=128,
        strip=False,
        label="User",
        widget=forms.TextInput(attrs={"list": "namespaces"}),
    )
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
        widget=forms.NumberInput(attrs={"class": "narrow", "placeholder": "10"}),
    )
    conversation_id = _IdentifierField(name="conversation_id", label="Conversation")

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

    def clean_user_id(self):
        return _identifier(self.cleaned_data["user_id"], "user_id")

    def clean_profile(self):
        return self.cleaned_data.get("profile") or self.default_profile or None

    def clean_limit(self):
        return self.cleaned_data.get("limit") or self.LIMIT_DEFAULT



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
        from search.synonyms import parse_lines

        text = self.cleaned_data["text"]
        try:
            parse_lines(text)  # the service parses again; this puts the error on the field
        except InvalidInput as exc:
            raise ValidationError(exc.message) from None
        return text

