from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """API tokens and roles."""

    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group
        from django.db.models.signals import m2m_changed, post_delete, post_save

        from accounts.models import ApiToken
        from memories import generation_cache

        # Rows the per-process cache holds, and what they depend on (a user's groups are
        # its role): any change invalidates every process's cache.
        user = get_user_model()
        for model in (ApiToken, user, Group):
            for signal in (post_save, post_delete):
                signal.connect(generation_cache.bump_on_change, sender=model,
                               dispatch_uid=f"rowcache-{signal}-{model.__name__}")
        m2m_changed.connect(generation_cache.bump_on_change, sender=user.groups.through,
                            dispatch_uid="rowcache-user-groups")
