"""API tokens (bearer credentials of agents)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """A bearer token; only its SHA-256 is stored, the token itself is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=64, blank=True, default="")
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    # Namespaces (user_ids) this token may touch; empty = every namespace its role allows.
    namespaces = models.JSONField(default=list, blank=True)
    # Agents (memories' agent_id) this token may write as and read; empty = every agent.
    agents = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Stamped when the token authenticates, at most once a minute (accounts.tokens).
    last_used_at = models.DateTimeField(null=True, blank=True)
    # None: never expires; from then on the token is refused as a revoked one is.
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "memories_apitoken"  # kept from the memories app (moved here in 0012)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @property
    def expired(self) -> bool:
        """Whether its expiry has passed (the token is then refused)."""
        return self.expires_at is not None and self.expires_at <= timezone.now()
