"""Schedule the periodic jobs: drift check and access-count fold (idempotent; the run script
calls it at start)."""

from django.conf import settings
from django.core.management.base import BaseCommand

from operations import jobs


class Command(BaseCommand):
    help = "Schedule the periodic reconcile and access-count fold jobs on the index queue."

    def handle(self, *args, **options):
        jobs.schedule_periodic()
        self.stdout.write(
            f"reconcile scheduled every {settings.MEMORY_RECONCILE_EVERY_SECONDS} s, "
            f"access-count fold every {settings.MEMORY_ACCESS_FOLD_SECONDS} s")
