"""Forms of the session pages."""

from django import forms

from console.forms import IdentifierField, NamespaceField, PagedFilterForm, per_page_field


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

