"""Forms of the index and policy pages."""

from django import forms

from console.forms import REASON_MAX, NamespaceField

# --- index: reindex, policy -------------------------------------------------------------------


class ReindexForm(forms.Form):
    """Blank ``user_id``: every namespace."""

    user_id = NamespaceField(must_exist=True, label="Namespace")


class NamespaceForm(forms.Form):
    user_id = NamespaceField(required=True, must_exist=True, label="Namespace (user)")


class PolicyForm(NamespaceForm):
    """The policy page's dry run: a namespace, and the consolidation's similarity threshold
    and group size (blank: the settings)."""

    threshold = forms.FloatField(
        required=False, min_value=0, max_value=1, label="Similarity threshold",
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1"}))
    max_members = forms.IntegerField(
        required=False, min_value=2, max_value=50, label="Members per group at most",
        widget=forms.NumberInput(attrs={"min": "2", "max": "50"}))


class _RequiredReason(forms.Form):
    reason = forms.CharField(
        max_length=REASON_MAX,
        error_messages={"required": "A reason is required."},
        widget=forms.TextInput(attrs={"placeholder": "why (required)"}))


class ApplyGroupForm(_RequiredReason):
    """Apply one consolidation group exactly as the page showed it (its memory ids)."""

    user_id = forms.CharField(max_length=128, strip=False, widget=forms.HiddenInput)
    group_id = forms.CharField(max_length=32, widget=forms.HiddenInput)
    memory_ids = forms.CharField(max_length=2000, widget=forms.HiddenInput)

    def clean_memory_ids(self):
        ids = [i for i in self.cleaned_data["memory_ids"].split(",") if i]
        if len(ids) < 2:
            raise forms.ValidationError("A group needs two or more memories.")
        return ids


class ApplyAllForm(_RequiredReason):
    """Apply every group shown (``group_id``, repeated) as one job."""

    user_id = forms.CharField(max_length=128, strip=False, widget=forms.HiddenInput)
    threshold = forms.FloatField(required=False, min_value=0, max_value=1,
                                 widget=forms.HiddenInput)
    max_members = forms.IntegerField(required=False, min_value=2, max_value=50,
                                     widget=forms.HiddenInput)


class UndoForm(_RequiredReason):
    """Undo a consolidation or a policy run: one audited action, a reason required."""
