from django.apps import AppConfig


class SearchConfig(AppConfig):
    """The search engine: analysis, BM25 scoring, the Redis index, ranking profiles."""

    name = "search"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from memories import generation_cache
        from search.models import RankingProfile, SynonymSet

        # Profiles and synonym sets are held by the per-process row cache: any change
        # invalidates every process's cache.
        for model in (RankingProfile, SynonymSet):
            for signal in (post_save, post_delete):
                signal.connect(generation_cache.bump_on_change, sender=model,
                               dispatch_uid=f"rowcache-{signal}-{model.__name__}")
