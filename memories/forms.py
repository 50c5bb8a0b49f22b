"""Input validation for the console pages (no business rules: services decide those).

Each form only checks the shape of what a browser sends; a ``ServiceError`` raised later by
``memories.services`` is attached to the same form with :func:`add_service_error`, so the
page shows one kind of error however deep the check was made.
"""

from django import forms
from django.core.exceptions import ValidationError

from memories.errors import InvalidInput, ServiceError
from memories.models import MemoryType, RankingProfile
from memories.validation import clean_identifier

PER_PAGE_DEFAULT = 25
PER_PAGE_MIN, PER_PAGE_MAX = 10, 100
REASON_MAX = 500


def add_service_error(form: forms.Form, exc: ServiceError) -> None:
    """Show a service error on the field it names, or above the form when it names none."""
    field = exc.field if exc.field in form.fields else None
    if field is not None and form.fields[field].widget.is_hidden:
        field = None  # a hidden field cannot show its error
    form.add_error(field, exc.message)


def _identifier(value: str, field: str) -> str:
    """The shared id rule (DESIGN "Identifiers") as a form validation error."""
    try:
        return clean_identifier(value, field)
    except InvalidInput as exc:
        raise ValidationError(exc.message) from None


class _IdentifierField(forms.CharField):
    """An optional id filter: blank means "any"; anything else must be a valid id."""

    def __init__(self, *, name: str, **kwargs):
        self.id_name = name
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)  # leading/trailing space is an error, not trimmed
        kwargs.setdefault("max_length", 128)
        super().__init__(**kwargs)

    def clean(self, value):
        value = super().clean(value)
        return _identifier(value, self.id_name) if value else ""


def _per_page_field() -> forms.IntegerField:
    return forms.IntegerField(
        required=False,
        min_value=PER_PAGE_MIN,
        max_value=PER_PAGE_MAX,
        label="Per page",
        widget=forms.NumberInput(attrs={"class": "narrow", "placeholder": str(PER_PAGE_DEFAULT)}),
    )


class _PagedFilterForm(forms.Form):
    """A GET filter form whose ``per_page`` is 10..100 (25 when absent)."""

    def clean_per_page(self):
        return self.cleaned_data.get("per_page") or PER_PAGE_DEFAULT

    def params(self) -> dict[str, str]:
        """The submitted, valid, non-blank filters as query-string values (in field order),
        so every pagination link carries exactly the filters that produced the page."""
        out = {}
        for name in self.fields:
            value = self.data.get(name, "")
            if value not in ("", None):
                out[name] = value
        return out


class MemoryFilterForm(_PagedFilterForm):
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Text",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "contains…"}),
    )
    user_id = _IdentifierField(name="user_id", label="User")
    conversation_id = _IdentifierField(name="conversation_id", label="Conversation")
    type = forms.ChoiceField(required=False, choices=[("", "any type"), *MemoryType.choices])
    state = forms.ChoiceField(
        required=False,
        choices=[("", "live and forgotten"), ("live", "live"), ("forgotten", "forgotten")],
    )
    importance_min = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Importance min",
        widget=forms.NumberInput(attrs={"step": "0.05", "class": "narrow", "placeholder": "0"}),
    )
    importance_max = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Importance max",
        widget=forms.NumberInput(attrs={"step": "0.05", "class": "narrow", "placeholder": "1"}),
    )
    per_page = _per_page_field()

    def clean(self):
        data = super().clean()
        low, high = data.get("importance_min"), data.get("importance_max")
        if low is not None and high is not None and low > high:
            self.add_error("importance_max", "Must be at least the minimum importance.")
        return data


class SessionFilterForm(_PagedFilterForm):
    user_id = _IdentifierField(name="user_id", label="User")
    agent_id = _IdentifierField(name="agent_id", label="Agent")
    active_since = forms.DateField(
        required=False,
        label="Active since",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    state = forms.ChoiceField(
        required=False,
        choices=[("", "hot and cold"), ("hot", "hot (in Redis)"), ("cold", "cold")],
    )
    per_page = _per_page_field()


class ImportanceForm(forms.Form):
    importance = forms.FloatField(
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs={"step": "0.05", "min": "0", "max": "1", "class": "narrow"}),
    )
    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX,
        widget=forms.TextInput(attrs={"placeholder": "reason (optional)"}),
    )
    # The version the editor saw: a change made meanwhile by someone else is a conflict
    # shown on the page, not silently overwritten (the service's optimistic lock).
    version = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "importance_%s")  # unique ids: one page, three forms
        super().__init__(*args, **kwargs)


class ReasonForm(forms.Form):
    """Forget / restore: the reason is optional but recorded in the history."""

    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX,
        widget=forms.TextInput(attrs={"placeholder": "reason (optional)"}),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "state_%s")
        super().__init__(*args, **kwargs)


class RollbackForm(forms.Form):
    version = forms.TypedChoiceField(coerce=int, choices=())
    reason = forms.CharField(
        max_length=REASON_MAX,
        error_messages={"required": "A reason is required for a rollback."},
        widget=forms.TextInput(attrs={"placeholder": "why (required)"}),
    )

    def __init__(self, *args, current_version: int, **kwargs):
        kwargs.setdefault("auto_id", "rollback_%s")
        super().__init__(*args, **kwargs)
        self.fields["version"].choices = [(v, f"v{v}") for v in range(current_version - 1, 0, -1)]


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


# --- memory detail: diff, purge, promote ------------------------------------------------------


class DiffForm(forms.Form):
    """``?a=&b=``: two version numbers of one memory (any order, equal allowed)."""

    a = forms.TypedChoiceField(coerce=int, choices=(), label="From")
    b = forms.TypedChoiceField(coerce=int, choices=(), label="To")

    def __init__(self, *args, versions: list[int], **kwargs):
        kwargs.setdefault("auto_id", "diff_%s")
        super().__init__(*args, **kwargs)
        choices = [(v, f"v{v}") for v in versions]
        for name in ("a", "b"):
            self.fields[name].choices = choices
            self.fields[name].error_messages["invalid_choice"] = (
                f"Version %(value)s does not exist; this memory has versions "
                f"{versions[0]}..{versions[-1]}."
                if versions
                else "This memory has no versions."
            )


class PurgeForm(forms.Form):
    """The typed confirmation a hard delete needs (no JavaScript dialog can be skipped)."""

    WORD = "purge"

    confirm = forms.CharField(
        max_length=20,
        label="Type purge to confirm",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX,
        widget=forms.TextInput(attrs={"placeholder": "reason (recorded in the audit feed)"}),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "purge_%s")
        super().__init__(*args, **kwargs)

    def clean_confirm(self):
        value = self.cleaned_data["confirm"].strip()
        if value != self.WORD:
            raise ValidationError(f'Type "{self.WORD}" (without quotes) to confirm the purge.')
        return value


class PromoteForm(ReasonForm):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "promote_%s")
        super().__init__(*args, **kwargs)


# --- memory list: bulk actions ----------------------------------------------------------------

BULK_MAX = 500


class BulkForm(forms.Form):
    """Several memories, one action (``services.memory_bulk``)."""

    memory_ids = forms.MultipleChoiceField(
        required=True,
        error_messages={"required": "Select at least one memory."},
    )
    action = forms.ChoiceField(
        choices=[
            ("importance", "Set importance"),
            ("forget", "Forget"),
            ("restore", "Restore"),
        ]
    )
    importance = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(
            attrs={"step": "0.05", "min": "0", "max": "1", "class": "narrow", "placeholder": "0.5"}
        ),
    )
    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX,
        widget=forms.TextInput(attrs={"placeholder": "reason (optional)"}),
    )
    # The list the user was looking at (its filters and page), re-rendered after the action.
    back = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "bulk_%s")
        super().__init__(*args, **kwargs)

    def clean_memory_ids(self):
        ids = self.cleaned_data["memory_ids"]
        if len(ids) > BULK_MAX:
            raise ValidationError(f"Select at most {BULK_MAX} memories at a time.")
        return list(dict.fromkeys(ids))

    def clean(self):
        data = super().clean()
        missing = data.get("action") == "importance" and data.get("importance") is None
        if missing and not self.has_error("importance"):
            self.add_error("importance", "Give the new importance (0 to 1).")
        return data


def _memory_id_choices(values) -> list[tuple[str, str]]:
    from memories.validation import MEMORY_ID_RE

    return [(v, v) for v in values if isinstance(v, str) and MEMORY_ID_RE.match(v)]


def bulk_form(data=None) -> BulkForm:
    """A BulkForm whose allowed ids are the well-formed ones submitted (which exist is the
    service's question: an unknown id is its NotFound, shown on the form)."""
    form = BulkForm(data)
    form.fields["memory_ids"].choices = _memory_id_choices(
        data.getlist("memory_ids") if data is not None else []
    )
    return form


# --- activity (audit feed) --------------------------------------------------------------------

AUDIT_ACTIONS = [
    "create",
    "edit",
    "importance",
    "forget",
    "restore",
    "rollback",
    "purge",
    "promote",
    "consolidate",
    "archive",
    "reindex",
    "reconcile",
    "cleanup",
    "import",
    "job_retry",
    "synonyms_replaced",
    "token_created",
    "token_revoked",
]


class AuditFilterForm(_PagedFilterForm):
    actor = forms.CharField(required=False, max_length=150, label="Actor")
    action = forms.CharField(
        required=False,
        max_length=32,
        label="Action",
        widget=forms.TextInput(attrs={"list": "audit-actions", "class": "narrow-text"}),
    )
    target = forms.CharField(
        required=False,
        max_length=200,
        label="Target",
        widget=forms.TextInput(attrs={"placeholder": "mem_… or user:…"}),
    )
    since = forms.DateTimeField(
        required=False,
        label="Since",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
    )
    page = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    per_page = _per_page_field()

    MAX_ROWS = 5000  # the deepest row a page may reach (the feed merges two sources)

    def clean_page(self):
        return self.cleaned_data.get("page") or 1

    def clean(self):
        data = super().clean()
        page, per_page = data.get("page"), data.get("per_page")
        if page and per_page and page * per_page > self.MAX_ROWS:
            self.add_error(
                None, f"Only the newest {self.MAX_ROWS} events are paged; narrow the filters."
            )
        return data

    def params(self) -> dict[str, str]:
        out = super().params()
        out.pop("page", None)
        return out


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
        from memories.synonyms import parse_lines

        text = self.cleaned_data["text"]
        try:
            parse_lines(text)  # the service parses again; this puts the error on the field
        except InvalidInput as exc:
            raise ValidationError(exc.message) from None
        return text


# --- tokens -----------------------------------------------------------------------------------


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
