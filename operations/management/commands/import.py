"""Import an export document (``--replace`` swaps each namespace in it for the file's)."""

import json

from django.core.management.base import BaseCommand, CommandError

from memories.errors import ServiceError
from memories.json_input import load_json
from operations import backup


class Command(BaseCommand):
    help = "Import memories from an export document."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--replace", action="store_true")

    def handle(self, *args, path, replace, **options):
        try:
            with open(path, "rb") as fh:
                doc = load_json(fh.read(), what=path)
            result = backup.import_memories(doc=doc, mode="replace" if replace else "merge")
        except (OSError, ValueError, ServiceError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(result))
