"""Merge near-duplicate long-term memories of a namespace (``--dry-run``: print the plan)."""

import json

from django.core.management.base import BaseCommand

from operations import consolidate


class Command(BaseCommand):
    help = "Consolidate near-duplicate long-term memories of one namespace."

    def add_arguments(self, parser):
        parser.add_argument("user_id")
        parser.add_argument("--dry-run", action="store_true")
        parser.add_argument("--threshold", type=float, default=None,
                            help="similarity threshold 0..1 (default: the setting)")
        parser.add_argument("--reason", default="consolidation")

    def handle(self, *args, user_id, dry_run, threshold, reason, **options):
        plan = consolidate.consolidation_plan(user_id=user_id, threshold=threshold)
        if dry_run:
            self.stdout.write(json.dumps(plan.as_dict(), indent=2, ensure_ascii=False))
            return
        result = consolidate.consolidate_groups(
            groups=[g.memory_ids for g in plan.groups], reason=reason)
        self.stdout.write(json.dumps(result, ensure_ascii=False))
