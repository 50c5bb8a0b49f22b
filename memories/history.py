"""Stamps each historical row with the change kind and actor the service asked for."""

from memories.models import ChangeKind, HistoryKind


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
