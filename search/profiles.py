"""Ranking profile reads (selectors). Writes live in services.

Every recall resolves a profile, so rows come from the process's row cache
(``memories.generation_cache``; any saved profile invalidates it in every process). The rows
returned are shared by threads: build a new profile (``lab.profile_build``) to change weights.
"""

from memories import generation_cache
from memories.errors import NotFound
from search.models import RankingProfile


def profile_default() -> RankingProfile:
    """The profile marked default (a data migration guarantees one exists)."""
    return generation_cache.cached("profile-default", _load_default)


def _load_default() -> RankingProfile:
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
    prof = generation_cache.cached(
        f"profile:{profile}", lambda: RankingProfile.objects.filter(name=profile).first())
    if prof is None:
        raise NotFound(f"profile {profile!r} not found", field="profile")
    return prof
