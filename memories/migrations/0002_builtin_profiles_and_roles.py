"""Built-in ranking profiles, the default mark and the role groups, so that a database that
has only run ``migrate`` is complete."""

from django.db import migrations

from memories.migrations import _builtins


def forwards(apps, schema_editor):
    _builtins.ensure(apps.get_model("memories", "RankingProfile"), apps.get_model("auth", "Group"))


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
