"""Give every ranking profile a first version.

Profiles written by data migrations (the built-ins, ``stemmed``, ``context``) were saved
through historical models, which record no history, so they had no version at all; an
evaluation run records "profile X at version N" and needs one. This adds a "+" version
holding each such profile's current settings. Idempotent.
"""

from django.db import migrations
from django.utils import timezone


def forwards(apps, schema_editor):
    Profile = apps.get_model("memories", "RankingProfile")
    Historical = apps.get_model("memories", "HistoricalRankingProfile")
    fields = [f.attname for f in Profile._meta.concrete_fields]
    for profile in Profile.objects.all():
        if Historical.objects.filter(id=profile.id).exists():
            continue
        Historical.objects.create(
            **{name: getattr(profile, name) for name in fields},
            history_date=profile.updated_at or timezone.now(), history_type="+",
            history_change_reason="first version (created by a data migration)")


class Migration(migrations.Migration):
    dependencies = [("memories", "0007_lab_judgments_querysets_runs")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
