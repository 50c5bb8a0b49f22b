"""Forms of the tokens page."""

from django import forms
from django.core.exceptions import ValidationError


class TokenCreateForm(forms.Form):
    username = forms.CharField(
        max_length=150, label="User", widget=forms.TextInput(attrs={"list": "usernames"})
    )
    role = forms.ChoiceField(
        required=False,
        label="Role",
        choices=[
            ("", "keep the user's role"),
            ("viewer", "viewer"),
            ("editor", "editor"),
            ("admin", "admin"),
        ],
    )
    name = forms.CharField(
        required=False,
        max_length=64,
        label="Name",
        widget=forms.TextInput(attrs={"placeholder": "what it is for"}),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "token_%s")
        super().__init__(*args, **kwargs)

    def clean_username(self):
        from django.contrib.auth import get_user_model

        name = self.cleaned_data["username"]
        user = get_user_model().objects.filter(username=name, is_active=True).first()
        if user is None:
            raise ValidationError(f"No active user named {name!r}.")
        self.user = user
        return name

