"""Ranking profile reads (selectors). Writes live in services."""

from memories.errors import NotFound
from memories.models import RankingProfile


def profile_default() -> RankingProfile:
    """The profile marked default (a data migration guarantees one exists)."""
    prof = RankingProfile.objects.filter(is_default=True).first()
    if prof is None:
        prof = RankingProfile.objects.get(name="bm25")
    return prof


def profile_resolve(profile) -> RankingProfile:
    """A RankingProfile from an instance, a name, or None (the default). Raises NotFound."""
    if isinstance(profile, RankingProfile):
        return profile
    if profile is None:
        return profile_default()
    try:
        return RankingProfile.objects.get(name=profile)
    except RankingProfile.DoesNotExist:
        raise NotFound(f"profile {profile!r} not found", field="profile") from None
