from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    """The memory core: Memory and its history, audit events, access folds, their writers."""

    name = "memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from simple_history.signals import pre_create_historical_record

        from memories import history

        # Every historical row (memories and ranking profiles) records its kind and actor.
        pre_create_historical_record.connect(
            history.stamp_history_row, dispatch_uid="memories.stamp_history_row"
        )
