"""``Memory.content_folded``: the content folded for the console's text filter (NFKC + case
folding), backfilled for every existing row (in batches, so a large table never sits in
memory at once)."""

from django.db import migrations, models

from memories.text_fold import fold

BATCH = 2000


def backfill(apps, schema_editor):
    """Fold the content of every row (also callable again: it only writes what differs)."""
    Memory = apps.get_model("memories", "Memory")
    last = ""
    while True:
        rows = list(Memory.objects.filter(memory_id__gt=last).order_by("memory_id")
                    .only("memory_id", "content", "content_folded")[:BATCH])
        if not rows:
            break
        last = rows[-1].memory_id
        changed = []
        for row in rows:
            folded = fold(row.content)
            if row.content_folded != folded:
                row.content_folded = folded
                changed.append(row)
        Memory.objects.bulk_update(changed, ["content_folded"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0013_memory_index_error"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="content_folded",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
