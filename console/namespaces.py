"""Namespaces as the console's forms see them: the ones that exist (to suggest in a
``<datalist id="namespaces">``) and the check "no such namespace".

A namespace (a ``user_id``) exists when it holds a memory (in any state) or a session.
"""

from collections.abc import Iterable

from memories.models import Memory
from sessions.models import Session

HINTS = 200


def namespace_hints():
    """The first ``HINTS`` namespaces, sorted: a lazy queryset (one query, run only when a
    template's datalist iterates it, so fragments never pay for it)."""
    memories = Memory.objects.order_by().values_list("user_id", flat=True).distinct()
    sessions = Session.objects.order_by().values_list("user_id", flat=True).distinct()
    return memories.union(sessions).order_by("user_id")[:HINTS]


def namespaces_missing(user_ids: Iterable[str]) -> list[str]:
    """Those of ``user_ids`` that hold neither a memory nor a session, in the given order
    (two queries at most)."""
    wanted = list(dict.fromkeys(user_ids))
    if not wanted:
        return []
    found = set(
        Memory.objects.filter(user_id__in=wanted)
        .order_by()
        .values_list("user_id", flat=True)
        .distinct()
    )
    rest = [u for u in wanted if u not in found]
    if rest:
        found |= set(
            Session.objects.filter(user_id__in=rest)
            .order_by()
            .values_list("user_id", flat=True)
            .distinct()
        )
    return [u for u in wanted if u not in found]


def no_such_namespace(missing: list[str]) -> str:
    """The form error for unknown namespaces."""
    names = ", ".join(f"“{u}”" for u in missing)
    return (
        f"No such namespace: {names}. A namespace exists once it holds a memory or a session; "
        "pick one from the suggestions."
    )
