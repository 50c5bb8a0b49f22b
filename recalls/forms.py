"""Forms of the recall pages: the list's filters, a replay's profile, a grade, and adding a
recall's query to a query set."""

import datetime as dt

from django import forms
from django.utils import timezone

from console.forms import IdentifierField, NamespaceField, PagedFilterForm, per_page_field
from lab.models import QuerySet
from recalls.log import INTERFACES
from recalls.readers import RecallFilter

QUERY_WORDS_MAX = 200  # characters of the list's query-words filter (the API's bound)


def _day(value: dt.date | None, *, after: bool = False) -> dt.datetime | None:
    """The start of ``value`` (or of the day after it) in the console's time zone."""
    if value is None:
        return None
    start = dt.datetime.combine(value + dt.timedelta(days=1 if after else 0), dt.time.min)
    return timezone.make_aware(start)


class RecallFilterForm(PagedFilterForm):
    """``/recalls/`` filters: blank means any. ``since`` and ``until`` are days, both
    included; ``q`` keeps recalls whose query holds every word."""

    user_id = NamespaceField(label="Namespace")
    actor = forms.CharField(required=False, max_length=150, label="Actor")
    agent_id = IdentifierField(name="agent_id", label="Agent")
    interface = forms.ChoiceField(required=False, label="Interface",
                                  choices=[("", "any"), *((i, i) for i in INTERFACES)])
    since = forms.DateField(required=False, label="Since",
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until",
                            widget=forms.DateInput(attrs={"type": "date"}))
    q = forms.CharField(required=False, max_length=QUERY_WORDS_MAX, label="Query words")
    per_page = per_page_field()

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", "Until must be on or after since.")
        return data

    def where(self) -> RecallFilter:
        """The valid form's filter (``readers.RecallFilter``)."""
        data = self.cleaned_data
        return RecallFilter(
            user_ids=(data["user_id"],) if data["user_id"] else None,
            agent_id=data["agent_id"] or None, actor=data["actor"].strip() or None,
            interface=data["interface"] or None, since=_day(data["since"]),
            until=_day(data["until"], after=True), q=data["q"])


class ReplayForm(forms.Form):
    """A replay on the recall's page: ``replay`` (its button) and ``profile`` (blank: the
    recall's own profile, as it is now)."""

    replay = forms.CharField(required=True, max_length=8, widget=forms.HiddenInput)
    profile = forms.ChoiceField(required=False, label="Profile")

    def __init__(self, *args, profiles: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["profile"].choices = [("", "its own profile"), *((p, p) for p in profiles)]


class GradeForm(forms.Form):
    """One result graded 0..3 (the lab's scale) for the recall's query."""

    memory_id = forms.CharField(max_length=20)
    grade = forms.TypedChoiceField(choices=[(str(g), str(g)) for g in range(4)], coerce=int,
                                   error_messages={"invalid_choice": "Grade is 0, 1, 2 or 3."})
    next = forms.CharField(required=False, max_length=2000)


class AddToQuerySetForm(forms.Form):
    """The recall's query added to one of the query sets of its namespace that the user may
    change (``query_set``) or to a new one (``name``): exactly one of the two."""

    query_set = forms.TypedChoiceField(required=False, coerce=int, empty_value=None,
                                       label="Query set")
    name = forms.CharField(required=False, max_length=100, label="or a new query set",
                           widget=forms.TextInput(attrs={"placeholder": "new set name"}))

    def __init__(self, *args, sets: list[QuerySet], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["query_set"].choices = [("", "choose a set"),
                                            *((s.pk, s.name) for s in sets)]

    def clean(self):
        data = super().clean()
        picked, name = data.get("query_set"), (data.get("name") or "").strip()
        if picked is None and not name and not self.errors:
            raise forms.ValidationError("Choose a query set or name a new one.")
        if picked is not None and name:
            raise forms.ValidationError("Choose a query set or name a new one, not both.")
        data["name"] = name
        return data
