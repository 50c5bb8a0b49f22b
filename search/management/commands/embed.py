"""``manage.py embed``: compute every missing or stale memory embedding now (semantic
rescoring), as the worker's periodic job does in the background."""

from django.core.management.base import BaseCommand

from search import embeddings


class Command(BaseCommand):
    help = "Compute the embeddings of memories that lack an up-to-date one."

    def handle(self, *args, **options):
        total = 0
        while True:
            done = embeddings.embed_pending(limit=1024)
            total += done
            if not done:
                break
        self.stdout.write(f"embedded {total} memories; {embeddings.pending_count()} pending")
