"""Apply the forgetting policy (``--dry-run`` prints the plan only); for cron users."""

import json

from django.core.management.base import BaseCommand

from operations import policy


class Command(BaseCommand):
    help = "Forget idle unimportant long-term memories, archive beyond the cap."

    def add_arguments(self, parser):
        parser.add_argument("user_id")
        parser.add_argument("--dry-run", action="store_true")

    def handle(self, *args, user_id, dry_run, **options):
        plan = policy.cleanup_plan(user_id=user_id)
        if dry_run:
            self.stdout.write(json.dumps(plan.as_dict(), indent=2))
            return
        self.stdout.write(json.dumps(policy.cleanup_apply(plan)))
