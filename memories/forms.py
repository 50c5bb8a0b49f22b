"""Input validation for the console pages (no business rules: services decide those).

Each form only checks the shape of what a browser sends; a ``ServiceError`` raised later by
``memories.services`` is attached to the same form with :func:`add_service_error`, so the
page shows one kind of error however deep the check was made.
"""

import datetime as dt

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from console.forms import (
    REASON_MAX,
    IdentifierField,
    NamespaceField,
    PagedFilterForm,
    per_page_field,
)
from memories.listing import STATES, MemoryFilters
from memories.models import MemoryType


def _date_field(label: str) -> forms.DateField:
    return forms.DateField(required=False, label=label,
                           widget=forms.DateInput(attrs={"type": "date"}))


def _day_start(day: dt.date | None) -> dt.datetime | None:
    """Midnight starting ``day`` in the current time zone (None for None)."""
    if day is None:
        return None
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


class MemoryFilterForm(PagedFilterForm):
    """The memory list's filters (a GET form: every value stays in the URL)."""

    q = forms.CharField(
        required=False,
        max_length=200,
        label="Text",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "every word, any order"}),
    )
    user_id = NamespaceField(label="Namespace")
    conversation_id = IdentifierField(name="conversation_id", label="Conversation")
    agent_id = IdentifierField(name="agent_id", label="Agent")
    author = forms.CharField(required=False, max_length=128, label="Author")
    tags = forms.CharField(
        required=False, max_length=500, label="Tags", help_text="comma-separated: all of them",
        widget=forms.TextInput(attrs={"placeholder": "tag-a, tag-b"}),
    )
    type = forms.ChoiceField(required=False, choices=[("", "any type"), *MemoryType.choices])
    # "all" is the blank choice's name in a URL (``?state=all``); the menu shows it once.
    state = forms.ChoiceField(
        required=False,
        choices=[("", "all states"), *((s, s) for s in STATES if s != "all")],
    )
    created_from = _date_field("Created from")
    created_to = _date_field("Created to")
    updated_from = _date_field("Updated from")
    updated_to = _date_field("Updated to")
    importance_min = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Importance min",
        widget=forms.NumberInput(attrs={"step": "any", "class": "narrow", "placeholder": "0–1"}),
    )
    importance_max = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Importance max",
        widget=forms.NumberInput(attrs={"step": "any", "class": "narrow", "placeholder": "0–1"}),
    )
    per_page = per_page_field()

    # (low, high, what the error on high says): each range's high end may not be below its low.
    RANGES = [
        ("importance_min", "importance_max", "Must be at least the minimum importance."),
        ("created_from", "created_to", "Must be on or after the first day."),
        ("updated_from", "updated_to", "Must be on or after the first day."),
    ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.is_bound and self.data.get("state") == "all":
            self.data = self.data.copy()
            self.data["state"] = ""

    def clean_tags(self):
        return tuple(dict.fromkeys(
            t.strip() for t in self.cleaned_data["tags"].split(",") if t.strip()))

    def clean(self):
        data = super().clean()
        for low_name, high_name, message in self.RANGES:
            low, high = data.get(low_name), data.get(high_name)
            if low is not None and high is not None and low > high:
                self.add_error(high_name, message)
        return data

    def filters(self) -> MemoryFilters:
        """The valid form's filters for ``memories.listing.memory_list``: each date range
        from the first day's midnight to the midnight after the last day (both included)."""
        data = self.cleaned_data

        def days(low: str, high: str):
            last = data[high]
            return _day_start(data[low]), _day_start(last + dt.timedelta(days=1) if last else None)

        return MemoryFilters(
            text=data["q"], user_id=data["user_id"], conversation_id=data["conversation_id"],
            agent_id=data["agent_id"], author=data["author"], tags=data["tags"], type=data["type"],
            state=data["state"], created=days("created_from", "created_to"),
            updated=days("updated_from", "updated_to"),
            importance=(data["importance_min"], data["importance_max"]),
        )


class ImportanceForm(forms.Form):
    importance = forms.FloatField(
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1", "class": "narrow"}),
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


class ConsolidationUndoForm(forms.Form):
    """Undo a consolidation: restore every source, forget the merged memory."""

    reason = forms.CharField(
        max_length=REASON_MAX,
        error_messages={"required": "A reason is required to undo a consolidation."},
        widget=forms.TextInput(attrs={"placeholder": "why (required)"}),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "undo_%s")
        super().__init__(*args, **kwargs)


class RollbackForm(forms.Form):
    version = forms.TypedChoiceField(coerce=int, choices=())
    reason = forms.CharField(
        max_length=REASON_MAX,
        error_messages={"required": "A reason is required for a rollback."},
        widget=forms.TextInput(attrs={"placeholder": "why (required)"}),
    )

    def __init__(self, *args, targets: list[int], **kwargs):
        """``targets``: the versions that hold content (``history.rollback_targets``)."""
        kwargs.setdefault("auto_id", "rollback_%s")
        super().__init__(*args, **kwargs)
        self.fields["version"].choices = [(v, f"v{v}") for v in targets]
        self.fields["version"].error_messages["invalid_choice"] = (
            "Version %(value)s holds no content to roll back to (a forget, purge or restore "
            "marker, or not an earlier version)."
        )


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
            attrs={"step": "any", "min": "0", "max": "1", "class": "narrow", "placeholder": "0–1"}
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



# --- a memory's fields: edit one, write a new one --------------------------------------------


class MemoryFieldsForm(forms.Form):
    """What a memory's author writes: content, tags, type, metadata (shapes only; the
    service's validation decides the rest and its errors land on the field they name)."""

    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), strip=False)
    tags = forms.CharField(
        required=False, max_length=2000, help_text="comma-separated",
        widget=forms.TextInput(attrs={"placeholder": "tag-a, tag-b"}),
    )
    type = forms.ChoiceField(choices=MemoryType.choices)
    metadata = forms.CharField(
        required=False, label="Metadata (JSON object)",
        widget=forms.Textarea(attrs={"rows": 4, "class": "mono", "spellcheck": "false"}),
    )

    def clean_tags(self):
        return [t.strip() for t in self.cleaned_data["tags"].split(",") if t.strip()]

    def clean_metadata(self):
        import json

        raw = self.cleaned_data["metadata"].strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise ValidationError(f"Not valid JSON: {exc}.") from None
        if not isinstance(value, dict):
            raise ValidationError("Metadata must be a JSON object ({...}).")
        return value


class EditForm(MemoryFieldsForm):
    """Edit a memory's content, tags, type and metadata (``services.memory_update``)."""

    reason = forms.CharField(
        max_length=REASON_MAX,
        error_messages={"required": "A reason is required to edit a memory."},
        widget=forms.TextInput(attrs={"placeholder": "why (required)"}),
    )
    # The version the editor started from: the service's optimistic lock (409 on a change
    # made meanwhile, shown with who made it and the diff).
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "edit_%s")
        super().__init__(*args, **kwargs)

    @classmethod
    def for_memory(cls, memory) -> "EditForm":
        import json

        return cls(initial={
            "content": memory.content, "tags": ", ".join(memory.tags), "type": memory.type,
            "metadata": json.dumps(memory.metadata, indent=2, ensure_ascii=False),
            "version": memory.version,
        })


class NewMemoryForm(MemoryFieldsForm):
    """A new memory (``services.memory_create``, as ``POST /api/v1/memories``): any
    namespace, an existing one suggested or a new one."""

    user_id = NamespaceField(required=True, label="Namespace")
    conversation_id = IdentifierField(
        name="conversation_id", label="Conversation", help_text="blank: user-wide")
    importance = forms.FloatField(
        required=False, min_value=0, max_value=1, help_text="blank: estimated from the content",
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "1", "class": "narrow"}),
    )
    agent_id = IdentifierField(name="agent_id", label="Agent",
                               help_text="the agent it is written as; blank: none")
    run_id = IdentifierField(name="run_id", label="Run", help_text="the agent's run; blank: none")

    field_order = ["user_id", "conversation_id", "agent_id", "run_id", "type", "content", "tags",
                   "importance", "metadata"]

