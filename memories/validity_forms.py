"""Forms of facts over time: the Conflicts page (filters, a decision, the newer text edited,
bulk accept) and a memory's "End this fact" and "Revalidate" (shapes only: the services
decide, and their errors land on these forms, ``console.forms.add_service_error``)."""

from django import forms
from django.core.exceptions import ValidationError

from console.forms import REASON_MAX, NamespaceField, PagedFilterForm, per_page_field
from memories.models import ConflictStatus

BULK_MAX = 200


def _reason(required: bool, placeholder: str, message: str = "") -> forms.CharField:
    errors = {"required": message} if message else {}
    return forms.CharField(required=required, max_length=REASON_MAX, error_messages=errors,
                           widget=forms.TextInput(attrs={"placeholder": placeholder}))


def _back() -> forms.CharField:
    # The list the user was looking at (its filters and page), shown again after the action.
    return forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)


class ConflictFilterForm(PagedFilterForm):
    """The Conflicts page's filters (a GET form): namespace and status (open when blank)."""

    user_id = NamespaceField(label="Namespace")
    status = forms.ChoiceField(required=False, choices=ConflictStatus.choices,
                               initial=ConflictStatus.OPEN)
    per_page = per_page_field()

    def clean_status(self):
        return self.cleaned_data["status"] or ConflictStatus.OPEN


class ConflictDecideForm(forms.Form):
    """Accept or reject one proposal (the button pressed names the decision)."""

    decision = forms.ChoiceField(choices=[("accept", "Accept"), ("reject", "Reject")])
    reason = _reason(False, "reason (optional)")
    back = _back()

    def __init__(self, *args, conflict_id: int = 0, **kwargs):
        kwargs.setdefault("auto_id", f"decide{conflict_id}_%s")
        super().__init__(*args, **kwargs)


class ConflictEditForm(forms.Form):
    """The proposal's newer text, corrected in place (``services.memory_update``)."""

    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), strip=False,
                              label="Newer text")
    reason = _reason(True, "why (required)", "A reason is required to edit a memory.")
    # The newer memory's version the form was made from: the service's optimistic lock.
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    back = _back()

    def __init__(self, *args, conflict_id: int = 0, **kwargs):
        kwargs.setdefault("auto_id", f"edit{conflict_id}_%s")
        super().__init__(*args, **kwargs)


class ConflictBulkForm(forms.Form):
    """Accept several proposals: the boxes ticked (``scope=selected``) or every proposal
    the page showed (``scope=shown``: their ids, sent by the page, never "whatever is open
    now", so nothing the reviewer did not see is accepted)."""

    scope = forms.ChoiceField(choices=[("selected", "selected"), ("shown", "shown")])
    conflict_ids = forms.TypedMultipleChoiceField(coerce=int, required=False, choices=())
    shown = forms.CharField(required=False, max_length=4000, widget=forms.HiddenInput)
    reason = _reason(False, "reason (optional)")
    back = _back()

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "bulk_%s")
        super().__init__(*args, **kwargs)
        picked = self.data.getlist("conflict_ids") if self.is_bound else []
        self.fields["conflict_ids"].choices = [(v, v) for v in picked if v.isdigit()]

    def clean_shown(self):
        parts = [p for p in self.cleaned_data["shown"].split(",") if p.strip()]
        if not all(p.strip().isdigit() for p in parts):
            raise ValidationError("The list of shown proposals was not what the page sent.")
        return [int(p) for p in parts]

    def clean(self):
        data = super().clean()
        ids = data.get("shown") if data.get("scope") == "shown" else data.get("conflict_ids")
        if "scope" in data and not self.errors and not ids:
            self.add_error(None, "Select at least one proposal." if data["scope"] == "selected"
                           else "No proposal is shown: nothing to accept.")
        if ids and len(ids) > BULK_MAX:
            self.add_error(None, f"Accept at most {BULK_MAX} proposals at a time.")
        data["ids"] = list(dict.fromkeys(ids or []))
        return data


class EndFactForm(forms.Form):
    """End a fact with no replacement (``services.memory_invalidate``)."""

    reason = _reason(True, "why (required)", "A reason is required to end a fact.")
    valid_until = forms.DateTimeField(
        required=False, label="Ended at",
        help_text="blank: now",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "end_%s")
        super().__init__(*args, **kwargs)


class RevalidateForm(forms.Form):
    """The fact holds again (``services.memory_revalidate``)."""

    reason = _reason(True, "why (required)", "A reason is required to revalidate a fact.")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "revalidate_%s")
        super().__init__(*args, **kwargs)
