"""Repair drift between the database and Redis (for cron users; also a scheduled job)."""

from django.core.management.base import BaseCommand

from operations import drift


class Command(BaseCommand):
    help = "Re-sync exactly the memories whose Redis state differs from the database."

    def handle(self, *args, **options):
        result = drift.drift_repair()
        self.stdout.write(f"stale {result['stale']}, orphans {result['orphans']}, "
                          f"drift after {result['drift_after']}")
        if result["unindexable"]:
            self.stderr.write(f"{result['unindexable']} memories cannot be indexed (their text "
                              "cannot be stored in Redis): listed on the Index page")
