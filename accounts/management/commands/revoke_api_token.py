"""Revoke API tokens by their prefix (the first 10 characters, e.g. ``mc_AbCdEfG``).

The prefix is what ``create_api_token`` records in the audit log and what the admin shows; the
whole token works too (only its prefix is used). Revocation is immediate: the next request
with the token answers 401. Exits with an error when no live token has that prefix.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.models import ApiToken
from accounts.tokens import token_revoke
from memories.services.audit import audit_record

PREFIX_LENGTH = 10  # accounts.tokens.token_create keeps token[:10]


class Command(BaseCommand):
    help = "Revoke the live API token(s) with this prefix (first 10 characters of the token)."

    def add_arguments(self, parser):
        parser.add_argument("prefix", help="the token's first 10 characters, or the whole token")

    @transaction.atomic
    def handle(self, *args, prefix: str, **options):
        prefix = prefix.strip()
        if len(prefix) < PREFIX_LENGTH:
            raise CommandError(
                f"a prefix has {PREFIX_LENGTH} characters (e.g. mc_AbCdEfG); got {len(prefix)}"
            )
        prefix = prefix[:PREFIX_LENGTH]
        owners = sorted(
            set(
                ApiToken.objects.filter(prefix=prefix, revoked_at__isnull=True).values_list(
                    "user__username", flat=True
                )
            )
        )
        revoked = token_revoke(prefix=prefix)
        if not revoked:
            raise CommandError(f"no live token has the prefix {prefix}")
        for username in owners:
            audit_record(
                actor="cli",
                action="token_revoked",
                target=f"user:{username}",
                data={"prefix": prefix},
            )
        self.stdout.write(
            f"revoked {revoked} token(s) with prefix {prefix} (user {', '.join(owners)})"
        )
