"""Import a LoCoMo-format file: one long-term memory per dialog turn, synchronously.

Reads only ``sample_id`` and ``conversation`` of each sample (parsing: ``operations.locomo``).
Writes through ``services.memory_create_many`` in batches, so every memory is indexed when
the command returns and a re-run deduplicates instead of adding copies.
"""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories import services
from memories.errors import ServiceError
from operations import locomo

BATCH = 1000


class Command(BaseCommand):
    help = "Import a LoCoMo-format JSON file (one memory per dialog turn, namespace = sample_id)."

    def add_arguments(self, parser):
        parser.add_argument("path", help="a LoCoMo JSON file (list of samples)")
        parser.add_argument(
            "--limit-samples",
            type=int,
            default=None,
            metavar="N",
            help="import only the first N samples",
        )
        parser.add_argument(
            "--no-captions",
            action="store_true",
            help="leave out ' [shares a photo: caption]' of photo turns",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, path, limit_samples, no_captions, no_progress, **options):
        if limit_samples is not None and limit_samples < 1:
            raise CommandError("--limit-samples must be at least 1")
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            samples = list(locomo.iter_samples(data))
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:  # JSONDecodeError is a ValueError
            raise CommandError(f"{path} is not a LoCoMo file: {exc}") from exc
        if limit_samples is not None:
            samples = samples[:limit_samples]

        per_sample = []
        for n, sample in enumerate(samples):
            try:
                items = list(locomo.iter_turns(sample, captions=not no_captions))
            except KeyError as exc:
                raise CommandError(f"sample {n} has no {exc.args[0]!r}") from exc
            except (TypeError, ValueError) as exc:
                raise CommandError(f"sample {n} ({sample.get('sample_id')}): {exc}") from exc
            per_sample.append((sample["sample_id"], items))

        total_turns = sum(len(items) for _, items in per_sample)
        bar = tqdm(
            total=total_turns,
            unit="turn",
            file=sys.stderr,
            disable=no_progress,
            desc="import_locomo",
        )
        created = deduplicated = 0
        try:
            for sample_id, items in per_sample:
                bar.set_postfix_str(str(sample_id))
                new = dup = 0
                for start in range(0, len(items), BATCH):
                    batch = items[start : start + BATCH]
                    try:
                        results = services.memory_create_many(items=batch, actor="import_locomo")
                    except ServiceError as exc:
                        where = exc.extra.get("index")
                        turn = batch[where]["metadata"]["dia_id"] if where is not None else "?"
                        raise CommandError(f"{sample_id} turn {turn}: {exc}") from exc
                    batch_dup = sum(1 for _, was_dup in results if was_dup)
                    dup += batch_dup
                    new += len(results) - batch_dup
                    bar.update(len(batch))
                created += new
                deduplicated += dup
                if no_progress:
                    self.stdout.write(
                        f"{sample_id}: {len(items)} turns, {new} created, {dup} deduplicated"
                    )
        finally:
            bar.close()
        self.stdout.write(
            f"imported {len(per_sample)} samples, {total_turns} turns: {created} memories "
            f"created, {deduplicated} deduplicated"
        )
