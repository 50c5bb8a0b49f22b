"""Forms of the tokens and users pages."""

from django import forms

from accounts.tokens import EXPIRES_IN_DAYS_MAX, clean_agents
from console.forms import namespace_list_field
from memories.errors import InvalidInput


class TokenCreateForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        label="User",
        help_text="An existing user, or a new name: the user is created (an API user, no "
        "password), as create_api_token does.",
        widget=forms.TextInput(attrs={"list": "usernames", "autocomplete": "off"}),
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
    change_role = forms.BooleanField(
        required=False,
        label="Yes, change this user's role",
        help_text="Needed when the role chosen differs from an existing user's role.",
    )
    namespaces = namespace_list_field(
        label="Namespaces",
        help_text="Comma-separated; blank: every namespace. The token reaches only these.",
    )
    new_namespaces = forms.BooleanField(
        required=False,
        label="Allow namespaces that hold nothing yet",
        help_text="For an agent that will write into a new namespace.",
    )
    agents = forms.CharField(
        required=False,
        max_length=4000,
        label="Agents",
        help_text="Comma-separated agent ids; blank: every agent. The token writes memories "
        "only as one of these agents and reads only theirs.",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    expires_in_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=EXPIRES_IN_DAYS_MAX,
        label="Expires in (days)",
        help_text="Blank: never. After that the token is refused, as a revoked one is.",
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

    def clean_agents(self) -> list[str]:
        parts = [p.strip() for p in self.cleaned_data["agents"].split(",") if p.strip()]
        try:
            return clean_agents(parts)
        except InvalidInput as exc:
            raise forms.ValidationError(exc.message) from None

    def clean(self):
        data = super().clean()
        if not data.get("new_namespaces") and data.get("namespaces"):
            self.fields["namespaces"].check_exist(self, data["namespaces"])
        return data


ROLE_CHOICES = [("viewer", "viewer"), ("editor", "editor"), ("admin", "admin")]


class UserCreateForm(forms.Form):
    """A human login. The password is checked by Django's validators (``accounts.users``);
    blank, the page shows a one-time link where the user sets it."""

    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=ROLE_CHOICES, label="Role")
    password = forms.CharField(
        required=False,
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="Blank: you get a one-time link where they set their own.",
    )
    password2 = forms.CharField(
        required=False,
        label="Password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "user_%s")
        super().__init__(*args, **kwargs)

    def clean(self):
        data = super().clean()
        if data.get("password", "") != data.get("password2", ""):
            self.add_error("password2", "The two passwords differ.")
        return data


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES, label="Role")
