"""Stamps each historical row with the change kind and actor the service asked for.

simple-history documents a ``pre_create_historical_record`` receiver as the way to fill
extra columns of a historical row on a save; a service tells :func:`stamp_history_row` what
the change is through :func:`history_stamp`. A bulk write passes the same columns to
simple-history's bulk helpers as ``custom_historical_attrs`` (:func:`history_attrs`).
"""

import contextlib
import contextvars

from memories.models import ChangeKind, HistoryKind

# Versions that only mark a change of state (forgotten, purged, brought back, ended, valid
# again: validity is undone by revalidating, never by a rollback): they hold no
# content of their own to roll back to (a restore repeats the version before its forget).
MARKER_KINDS = frozenset({ChangeKind.FORGET, ChangeKind.ARCHIVE, ChangeKind.PURGE,
                          ChangeKind.RESTORE, ChangeKind.SUPERSEDE, ChangeKind.INVALIDATE,
                          ChangeKind.REVALIDATE})

# The extra columns of the change being saved (``history_attrs``), set by ``history_stamp``
# for the saves inside it. A context variable belongs to the thread (or task) that set it,
# so concurrent requests never see each other's stamp.
_stamp: contextvars.ContextVar[dict | None] = contextvars.ContextVar("history_stamp",
                                                                    default=None)


def rollback_targets(memory) -> list[int]:
    """The earlier versions a rollback may go back to, newest first: every one that holds
    content (not a marker of ``MARKER_KINDS``)."""
    rows = memory.history.filter(version__lt=memory.version).exclude(kind__in=MARKER_KINDS)
    return sorted(set(rows.values_list("version", flat=True)), reverse=True)


def actor_name(actor) -> str:
    """The name a change is recorded under: a user's username, a string as given (a job,
    an API token's owner), or "system" for no actor."""
    if actor is None:
        return "system"
    return actor if isinstance(actor, str) else actor.get_username()


def history_attrs(kind: str, actor) -> dict:
    """The extra columns of a historical row (``HistoryKind``) for a change of ``kind`` by
    ``actor``: a nameless actor (None, "") is recorded as "system", so no version is ever
    attributed to nobody."""
    return {"kind": kind, "changed_by": actor_name(actor) or "system"}


@contextlib.contextmanager
def history_stamp(*, kind: str, actor):
    """Record every historical row saved inside as a change of ``kind`` by ``actor``.

    ``with history_stamp(kind=ChangeKind.EDIT, actor=user): memory.save()``. The reason and
    the history user stay simple-history's own ``_change_reason`` / ``_history_user``."""
    token = _stamp.set(history_attrs(kind, actor))
    try:
        yield
    finally:
        _stamp.reset(token)


def stamp_history_row(sender, instance, history_instance, **kwargs) -> None:
    """``pre_create_historical_record`` receiver: the kind and actor of the current
    :func:`history_stamp`. A save outside any (a ranking profile's, a purge's ``-`` row) is
    an edit by "system", so nothing is ever recorded without a kind."""
    if not isinstance(history_instance, HistoryKind):
        return
    attrs = _stamp.get() or history_attrs(ChangeKind.EDIT, None)
    history_instance.kind = attrs["kind"]
    history_instance.changed_by = attrs["changed_by"]
