from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group
        from django.db.models.signals import m2m_changed, post_delete, post_save
        from simple_history.signals import pre_create_historical_record

        from memories import generation_cache, history
        from memories.models import ApiToken, RankingProfile, SynonymSet

        pre_create_historical_record.connect(
            history.stamp_history_row, dispatch_uid="memories.stamp_history_row"
        )
        # Rows the per-process cache holds, and what they depend on (a user's groups are
        # its role): any change invalidates every process's cache.
        user = get_user_model()
        for model in (ApiToken, RankingProfile, SynonymSet, user, Group):
            for signal in (post_save, post_delete):
                signal.connect(generation_cache.bump_on_change, sender=model,
                               dispatch_uid=f"rowcache-{signal}-{model.__name__}")
        m2m_changed.connect(generation_cache.bump_on_change, sender=user.groups.through,
                            dispatch_uid="rowcache-user-groups")
