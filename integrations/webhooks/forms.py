"""The console form that registers a webhook endpoint (checked again by the writer)."""

from django import forms
from django.conf import settings

from integrations.webhooks.events import EVENT_TYPES


class EndpointForm(forms.Form):
    url = forms.CharField(label="URL", max_length=2000, help_text="",
                          widget=forms.URLInput(attrs={"placeholder": "https://example.com/hooks/memory"}))
    description = forms.CharField(label="Description", max_length=200, required=False)
    events = forms.MultipleChoiceField(label="Events", choices=[(e, e) for e in EVENT_TYPES],
                                       widget=forms.CheckboxSelectMultiple,
                                       initial=list(EVENT_TYPES))
    namespaces = forms.CharField(
        label="Namespaces", required=False,
        help_text="Comma-separated user_ids; empty = every namespace.",
        widget=forms.TextInput(attrs={"placeholder": "alice, team-support"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Read at each form, not at import: the setting decides what the writer refuses
        # (endpoints.py), so the help text says what it does now.
        self.fields["url"].help_text = (
            "Addresses on loopback, private or link-local networks are allowed "
            "(WEBHOOKS_ALLOW_PRIVATE is on)." if settings.WEBHOOKS_ALLOW_PRIVATE else
            "Addresses on loopback, private or link-local networks are refused.")

    def clean_namespaces(self) -> list[str]:
        return [n.strip() for n in self.cleaned_data["namespaces"].split(",") if n.strip()]
