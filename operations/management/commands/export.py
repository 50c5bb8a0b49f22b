"""Export memories (one namespace or all) as versioned JSON to stdout or a file."""

import json

from django.core.management.base import BaseCommand

from operations import backup


class Command(BaseCommand):
    help = "Write an export document (schema-versioned JSON)."

    def add_arguments(self, parser):
        parser.add_argument("--user-id")
        parser.add_argument("--output", "-o", help="file (default: stdout)")

    def handle(self, *args, user_id=None, output=None, **options):
        doc = backup.export_memories(user_id=user_id)
        text = json.dumps(doc, ensure_ascii=False, indent=1)
        if output:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
            self.stderr.write(f"{len(doc['memories'])} memories written to {output}")
        else:
            self.stdout.write(text)
