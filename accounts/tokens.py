"""API tokens: random, shown once, stored as SHA-256, revocable."""

import hashlib
import secrets

from django.utils import timezone

from accounts.models import ApiToken
from accounts.roles import role_of
from memories import generation_cache


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(*, user, name: str = "", namespaces: list[str] | None = None) -> str:
    """Create a token for ``user``, optionally restricted to ``namespaces``; returns the token
    itself (only its hash is kept)."""
    token = "mc_" + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, prefix=token[:10], key_hash=_digest(token),
                            namespaces=sorted(set(namespaces or [])))
    return token


def token_user(token: str):
    """The active user of a live token, or None (unknown, revoked or inactive user)."""
    row = token_lookup(token)
    return row.user if row else None


def token_lookup(token: str) -> ApiToken | None:
    """The live token row (with its user, whose role is resolved) for ``token``, or None.

    Rows come from the process's row cache (``memories.generation_cache``): revoking a
    token, or changing its user or the user's groups, reaches every process with its next
    request. The row is shared by the process's threads: copy its user before changing it.
    """
    if not token or len(token) > 200:
        return None
    digest = _digest(token)
    row = generation_cache.cached(f"token:{digest}", lambda: _load(digest))
    if row is None:
        return None
    now = timezone.now()
    if row.last_used_at is None or (now - row.last_used_at).total_seconds() > 60:
        row.last_used_at = now
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row


def _load(digest: str) -> ApiToken | None:
    row = (ApiToken.objects.select_related("user")
           .filter(key_hash=digest, revoked_at__isnull=True).first())
    if row is None or not row.user.is_active:
        return None
    role_of(row.user)  # resolved once per cached row, not once per request
    return row


def token_revoke(*, prefix: str) -> int:
    """Revoke every live token starting with ``prefix``; returns how many."""
    revoked = ApiToken.objects.filter(prefix=prefix, revoked_at__isnull=True).update(
        revoked_at=timezone.now())
    generation_cache.bump()  # an update() sends no signal
    return revoked
