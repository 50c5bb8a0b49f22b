"""Forms of the index and policy pages."""

from django import forms

from console.forms import _identifier, _IdentifierField

# --- index: reindex, policy -------------------------------------------------------------------


class ReindexForm(forms.Form):
    """Blank ``user_id``: every namespace."""

    user_id = _IdentifierField(name="user_id", label="Namespace")



class NamespaceForm(forms.Form):
    user_id = forms.CharField(
        max_length=128,
        strip=False,
        label="Namespace (user)",
        widget=forms.TextInput(attrs={"list": "namespaces"}),
    )

    def clean_user_id(self):
        return _identifier(self.cleaned_data["user_id"], "user_id")

