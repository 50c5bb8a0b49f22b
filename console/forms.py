"""What the console's forms share (service errors shown on a form, paged filters), and the
activity feed's filter."""

from django import forms
from django.core.exceptions import ValidationError

from console.namespaces import namespaces_missing, no_such_namespace
from memories.errors import InvalidInput, ServiceError
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


def checked_identifier(value: str, field: str) -> str:
    """The shared id rule (DESIGN "Identifiers") as a form validation error."""
    try:
        return clean_identifier(value, field)
    except InvalidInput as exc:
        raise ValidationError(exc.message) from None


class IdentifierField(forms.CharField):
    """An optional id filter: blank means "any"; anything else must be a valid id."""

    def __init__(self, *, name: str, **kwargs):
        self.id_name = name
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)  # leading/trailing space is an error, not trimmed
        kwargs.setdefault("max_length", 128)
        super().__init__(**kwargs)

    def clean(self, value):
        value = super().clean(value)
        return checked_identifier(value, self.id_name) if value else ""


class NamespaceField(IdentifierField):
    """A namespace (``user_id``): suggests the existing ones (``list="namespaces"``, the
    ``_namespaces_datalist.html`` include) and, with ``must_exist``, refuses one that holds
    no memory and no session ("no such namespace"). Blank is allowed unless ``required``."""

    def __init__(self, *, name: str = "user_id", must_exist: bool = False, **kwargs):
        self.must_exist = must_exist
        kwargs.setdefault("widget", forms.TextInput(attrs={"list": "namespaces"}))
        super().__init__(name=name, **kwargs)

    def clean(self, value):
        value = super().clean(value)
        if value and self.must_exist and namespaces_missing([value]):
            raise ValidationError(no_such_namespace([value]))
        return value


class NamespaceListField(forms.CharField):
    """Comma-separated namespaces → a list of distinct ids, each checked as an id; whether
    they exist is the form's call (:meth:`check_exist`)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 4000)
        kwargs.setdefault(
            "widget", forms.TextInput(attrs={"list": "namespaces", "autocomplete": "off"})
        )
        super().__init__(**kwargs)

    def clean(self, value):
        value = super().clean(value)
        out = []
        for part in (value or "").split(","):
            part = part.strip()
            if part and part not in out:
                out.append(checked_identifier(part, "namespaces"))
        return out

    def check_exist(self, form: forms.Form, values: list[str]) -> None:
        missing = namespaces_missing(values)
        if missing:
            form.add_error("namespaces", no_such_namespace(missing))


def namespace_list_field(**kwargs) -> NamespaceListField:
    return NamespaceListField(**kwargs)


def default_hint(value) -> str:
    """The placeholder of a field whose blank means a default: a bare "10" in a field reads
    as a value already typed in, "default 10" does not."""
    return f"default {value}"


def per_page_field() -> forms.IntegerField:
    return forms.IntegerField(
        required=False,
        min_value=PER_PAGE_MIN,
        max_value=PER_PAGE_MAX,
        label="Per page",
        widget=forms.NumberInput(attrs={"class": "narrow", "placeholder": default_hint(PER_PAGE_DEFAULT)}),
    )


class PagedFilterForm(forms.Form):
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


# --- activity (audit feed) --------------------------------------------------------------------

def audit_actions() -> list[str]:
    """Every action the Activity feed can show, sorted: each change kind of a memory version
    and each action the audit events hold (one query), so a new kind of event is offered
    without a list here to keep up to date."""
    from memories.models import AuditEvent, ChangeKind

    held = AuditEvent.objects.values_list("action", flat=True).distinct()
    return sorted({*ChangeKind.values, *held})


class AuditFilterForm(PagedFilterForm):
    actor = forms.CharField(required=False, max_length=150, label="Actor")
    action = forms.ChoiceField(required=False, label="Action")
    namespace = NamespaceField(name="namespace", label="Namespace")
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
    per_page = per_page_field()

    MAX_ROWS = 5000  # the deepest row a page may reach (the feed merges two sources)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [("", "any action"),
                                         *((a, a) for a in audit_actions())]

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



class UsageForm(forms.Form):
    """The Usage page's filters: a namespace (empty: every one) and how many days back."""

    DAYS = (7, 14, 30)

    namespace = NamespaceField(name="namespace", label="Namespace")
    days = forms.TypedChoiceField(choices=[(d, f"last {d} days") for d in DAYS], coerce=int,
                                  required=False, empty_value=14, initial=14, label="Days")

    def clean_days(self):
        return self.cleaned_data.get("days") or 14
