from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    """The memory core: Memory and its history, audit events, access folds, their writers."""

    name = "memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import request_finished, request_started
        from simple_history.signals import pre_create_historical_record

        from memories import generation_cache, history

        # The row cache reads its generation once per request.
        request_started.connect(generation_cache.request_started,
                                dispatch_uid="memories.rowcache_request_started")
        request_finished.connect(generation_cache.request_finished,
                                 dispatch_uid="memories.rowcache_request_finished")

        # Every historical row (memories and ranking profiles) records its kind and actor.
        pre_create_historical_record.connect(
            history.stamp_history_row, dispatch_uid="memories.stamp_history_row"
        )
