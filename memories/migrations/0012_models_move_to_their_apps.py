"""The models that moved to their own apps (search, agent_sessions, lab, accounts) leave the
memories app's state; their tables stay. Their content types (and so their permissions)
follow them, so nothing that points at a content type loses its target."""

from django.db import migrations

MOVED = {
    "search": ["rankingprofile", "historicalrankingprofile", "synonymset"],
    "agent_sessions": ["session", "message"],
    "lab": ["judgment", "queryset", "evalrun"],
    "accounts": ["apitoken"],
}


def move_content_types(apps, schema_editor, *, backwards=False):
    """Relabel the moved models' content types (kept rows keep their ids, so permissions,
    admin log entries and generic relations keep pointing at them). A content type the new
    app already has (created by an earlier run) wins; the old one is then left alone."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for label, models in MOVED.items():
        old, new = ("memories", label) if not backwards else (label, "memories")
        for model in models:
            if ContentType.objects.using(db).filter(app_label=new, model=model).exists():
                continue
            ContentType.objects.using(db).filter(app_label=old, model=model).update(app_label=new)


def move_content_types_back(apps, schema_editor):
    move_content_types(apps, schema_editor, backwards=True)


class Migration(migrations.Migration):

    dependencies = [
        ('search', '0001_initial'),
        ('agent_sessions', '0001_initial'),
        ('lab', '0001_initial'),
        ('accounts', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('memories', '0011_session_counters'),
    ]

    operations = [
        # The tables exist (created by memories); only Django's model state moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='apitoken',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='evalrun',
                    name='query_set',
                ),
                migrations.RemoveField(
                    model_name='historicalrankingprofile',
                    name='history_user',
                ),
                migrations.DeleteModel(
                    name='Judgment',
                ),
                migrations.RemoveField(
                    model_name='message',
                    name='session',
                ),
                migrations.DeleteModel(
                    name='RankingProfile',
                ),
                migrations.DeleteModel(
                    name='SynonymSet',
                ),
                migrations.DeleteModel(
                    name='ApiToken',
                ),
                migrations.DeleteModel(
                    name='EvalRun',
                ),
                migrations.DeleteModel(
                    name='QuerySet',
                ),
                migrations.DeleteModel(
                    name='HistoricalRankingProfile',
                ),
                migrations.DeleteModel(
                    name='Message',
                ),
                migrations.DeleteModel(
                    name='Session',
                ),
            ],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
