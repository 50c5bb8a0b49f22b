from django.apps import AppConfig


class RecallsConfig(AppConfig):
    """The recall log: what each recall answered, and the feedback on its results."""

    name = "recalls"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # A purge clears the questions that recalled the purged memories (recalls.erasure).
        from memories.services.purge import memories_erasing
        from recalls.erasure import recall_log_erase

        memories_erasing.connect(recall_log_erase, dispatch_uid="recalls.erasure")
