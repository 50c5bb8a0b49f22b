"""Stamps each historical row with the change kind and actor the service asked for."""

from simple_history.manager import HistoryDescriptor

from memories.models import ChangeKind, HistoryKind

# Versions that only mark a change of state (forgotten, purged, brought back, ended, valid
# again: validity is undone by revalidating, never by a rollback): they hold no
# content of their own to roll back to (a restore repeats the version before its forget).
MARKER_KINDS = frozenset({ChangeKind.FORGET, ChangeKind.ARCHIVE, ChangeKind.PURGE,
                          ChangeKind.RESTORE, ChangeKind.SUPERSEDE, ChangeKind.INVALIDATE,
                          ChangeKind.REVALIDATE})


def rollback_targets(memory) -> list[int]:
    """The earlier versions a rollback may go back to, newest first: every one that holds
    content (not a marker of ``MARKER_KINDS``)."""
    rows = memory.history.filter(version__lt=memory.version).exclude(kind__in=MARKER_KINDS)
    return sorted(set(rows.values_list("version", flat=True)), reverse=True)


def stamp_history_row(sender, instance, history_instance, **kwargs) -> None:
    """``pre_create_historical_record`` receiver: copy ``_history_kind``/``_history_actor``.

    Services set these attributes on the instance before ``save()``; the default for a save
    that forgot them is an edit by "system" so nothing is ever recorded without a kind.
    """
    if not isinstance(history_instance, HistoryKind):
        return
    history_instance.kind = getattr(instance, "_history_kind", ChangeKind.EDIT)
    history_instance.changed_by = getattr(instance, "_history_actor", "") or "system"


def actor_name(actor) -> str:
    """The name a change is recorded under: a user's username, a string as given (a job,
    an API token's owner), or "system" for no actor."""
    if actor is None:
        return "system"
    return actor if isinstance(actor, str) else actor.get_username()


class _OneManagerClass(HistoryDescriptor):
    """simple-history's ``model.history`` descriptor, building its manager class once:
    the original builds a new class (``Manager.from_queryset``, which walks the queryset
    class with ``inspect``) on every access, and every versioned save reads it once, a
    measurable share of a create's CPU. The manager it returns is the same."""

    def __get__(self, instance, owner):
        cls = self.__dict__.get("_manager")
        if cls is None:
            cls = self._manager = self.manager_class.from_queryset(self.queryset_class)
        return cls(self.model, instance)


def build_history_managers_once(*models) -> None:
    """Swap the ``history`` descriptor of ``models`` for :class:`_OneManagerClass`."""
    for model in models:
        for name, value in list(vars(model).items()):
            if type(value) is HistoryDescriptor:
                one = _OneManagerClass.__new__(_OneManagerClass)
                one.__dict__.update(vars(value))
                setattr(model, name, one)
