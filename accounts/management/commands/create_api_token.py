"""Create an API token for a user (created if needed) with a role; prints the token last."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.roles import ROLES
from accounts.tokens import token_create
from memories.services.audit import audit_record
from memories.validation import clean_identifier


class Command(BaseCommand):
    help = "Create an API token for USERNAME with a role; the token is the last output line."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=ROLES, default="viewer")
        parser.add_argument("--name", default="cli")
        parser.add_argument("--namespace", action="append", default=[], dest="namespaces",
                            help="restrict the token to this namespace (repeatable)")

    @transaction.atomic
    def handle(self, *args, username, role, name, namespaces, **options):
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.remove(*Group.objects.filter(name__in=ROLES))
        user.groups.add(Group.objects.get(name=role))
        for ns in namespaces:
            clean_identifier(ns, "namespace")
        token = token_create(user=user, name=name, namespaces=namespaces)
        audit_record(actor="cli", action="token_created", target=f"user:{username}",
                     data={"role": role, "prefix": token[:10], "namespaces": namespaces})
        self.stdout.write(f"{'created' if created else 'updated'} user {username} ({role})")
        self.stdout.write(token)
