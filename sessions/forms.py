"""Forms of the session pages."""

from django import forms

from console.forms import IdentifierField, NamespaceField, PagedFilterForm, per_page_field
from memories.models import MemoryType
from sessions.formation.extraction import MAX_CONTENT


class SessionFilterForm(PagedFilterForm):
    user_id = NamespaceField(label="User")
    agent_id = IdentifierField(name="agent_id", label="Agent")
    active_since = forms.DateField(
        required=False,
        label="Active since",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    state = forms.ChoiceField(
        required=False,
        choices=[("", "hot and cold"), ("hot", "hot (in Redis)"), ("cold", "cold")],
    )
    per_page = per_page_field()



class SessionAtForm(forms.Form):
    """Time travel on the session page: the context as it was at ``at``."""

    at = forms.DateTimeField(
        required=False,
        label="As of",
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
                       "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"},
                                   format="%Y-%m-%dT%H:%M:%S"),
        error_messages={"invalid": "Enter a date and time, e.g. 2026-12-04T10:30."},
    )


class CandidateForm(forms.Form):
    """One suggested memory accepted (as suggested, or edited first): the candidate travels
    in the form, so what is written is what the page showed."""

    content = forms.CharField(
        max_length=MAX_CONTENT, strip=True,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={"required": "The memory needs some text."},
    )
    type = forms.ChoiceField(choices=MemoryType.choices)
    importance = forms.FloatField(
        required=False, min_value=0, max_value=1, label="Importance (0 to 1, blank: estimated)",
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1",
                                        "class": "narrow"}),
    )
    seqs = forms.CharField(max_length=2000, widget=forms.HiddenInput)
    confidence = forms.FloatField(required=False, min_value=0, max_value=1,
                                  widget=forms.HiddenInput)
    method = forms.ChoiceField(choices=[("local", "local"), ("llm", "llm")], required=False,
                               widget=forms.HiddenInput)
    index = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)
    edited = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def clean_seqs(self) -> list[int]:
        raw = self.cleaned_data["seqs"]
        try:
            seqs = sorted({int(s) for s in raw.split(",") if s.strip()})
        except ValueError:
            raise forms.ValidationError("The source messages are a list of numbers.") from None
        if not seqs or seqs[0] < 1:
            raise forms.ValidationError("The source messages are a list of numbers.")
        return seqs
