"""Merge related long-term memories of a namespace (``--dry-run``: print the groups)."""

import json

from django.core.management.base import BaseCommand

from operations import policy


class Command(BaseCommand):
    help = "Consolidate related long-term memories of one namespace."

    def add_arguments(self, parser):
        parser.add_argument("user_id")
        parser.add_argument("--dry-run", action="store_true")

    def handle(self, *args, user_id, dry_run, **options):
        groups = policy.consolidation_plan(user_id=user_id)
        if dry_run:
            self.stdout.write(json.dumps(groups, indent=2))
            return
        merged = [policy.consolidate_group(memory_ids=g).memory_id for g in groups]
        self.stdout.write(f"{len(merged)} consolidated memories: {' '.join(merged)}")
