"""API tokens (bearer credentials of agents)."""

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A bearer token; only its SHA-256 is stored, the token itself is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=64, blank=True, default="")
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    # Namespaces (user_ids) this token may touch; empty = every namespace its role allows.
    namespaces = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "memories_apitoken"  # kept from the memories app (moved here in 0012)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

