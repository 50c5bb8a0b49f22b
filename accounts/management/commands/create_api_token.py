"""Create an API token for a user (created if needed) with a role; prints the token last.

The same writer as the console's Tokens page (``accounts.tokens.token_issue``): a new user
gets ``--role`` (viewer when absent); an existing user's role changes only when ``--role``
names it explicitly, and without ``--role`` it is kept.
"""

from django.core.management.base import BaseCommand, CommandError

from accounts.roles import ROLES
from accounts.tokens import token_issue
from memories.errors import ServiceError


class Command(BaseCommand):
    help = "Create an API token for USERNAME with a role; the token is the last output line."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--role",
            choices=ROLES,
            default=None,
            help="the user's role (a new user: viewer when absent; an existing one: kept)",
        )
        parser.add_argument("--name", default="cli")
        parser.add_argument(
            "--namespace",
            action="append",
            default=[],
            dest="namespaces",
            help="restrict the token to this namespace (repeatable)",
        )
        parser.add_argument(
            "--agent",
            action="append",
            default=[],
            dest="agents",
            help="restrict the token to this agent's memories (repeatable)",
        )
        parser.add_argument(
            "--expires-in-days",
            type=int,
            default=None,
            help="the token stops working after this many days (default: never)",
        )

    def handle(self, *args, username, role, name, namespaces, expires_in_days, agents=(),
               **options):
        from django.contrib.auth import get_user_model

        if role is None and not get_user_model().objects.filter(username=username).exists():
            role = "viewer"
        try:
            issued = token_issue(
                actor=None,
                audit_actor="cli",
                username=username,
                role=role,
                name=name,
                namespaces=namespaces,
                agents=agents,
                change_role=True,  # --role on the command line is the explicit choice
                expires_in_days=expires_in_days,
            )
        except ServiceError as exc:
            raise CommandError(
                f"{exc.field}: {exc.message}" if exc.field else exc.message
            ) from None
        self.stdout.write(
            f"{'created' if issued.created else 'updated'} user {username} ({issued.role})"
        )
        if issued.expires_at:
            self.stdout.write(f"expires at {issued.expires_at.isoformat(timespec='seconds')}")
        self.stdout.write(issued.token)
