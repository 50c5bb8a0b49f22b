"""Rebuild the Redis index from the database (all namespaces, or one), synchronously."""

from django.core.management.base import BaseCommand

from operations import reindex


class Command(BaseCommand):
    help = "Rebuild the index beside the live one and swap (also restores a flushed Redis)."

    def add_arguments(self, parser):
        parser.add_argument("--user-id", help="only this namespace")

    def handle(self, *args, user_id=None, **options):
        def report(ns, done, total):
            self.stderr.write(f"\r{ns}: {done}/{total}", ending="")

        if user_id:
            results = [reindex.reindex_namespace(user_id, progress=lambda d, t: report(user_id, d, t))]
        else:
            results = reindex.reindex_all(progress=report)
        self.stderr.write("")
        total = sum(r["indexed"] for r in results)
        skipped = sum(r.get("skipped", 0) for r in results)
        self.stdout.write(f"reindexed {len(results)} namespace(s), {total} memories")
        if skipped:
            self.stderr.write(f"{skipped} memories could not be indexed (their text cannot be "
                              "stored in Redis): listed on the Index page and in /index/health")
