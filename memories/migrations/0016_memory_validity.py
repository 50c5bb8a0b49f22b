from django.db import migrations, models
from django.db.models import F


def valid_from_creation(apps, schema_editor):
    # Every memory written before validity held its fact from the time it was recorded.
    for name in ("Memory", "HistoricalMemory"):
        apps.get_model("memories", name).objects.update(valid_from=F("created_at"))


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0015_memory_context_from'),
    ]

    operations = [
        migrations.AlterField(
            model_name='historicalmemory',
            name='kind',
            field=models.CharField(choices=[('create', 'Create'), ('edit', 'Edit'), ('importance', 'Importance'), ('rollback', 'Rollback'), ('forget', 'Forget'), ('restore', 'Restore'), ('purge', 'Purge'), ('promote', 'Promote'), ('consolidate', 'Consolidate'), ('archive', 'Archive'), ('supersede', 'Supersede'), ('invalidate', 'Invalidate'), ('revalidate', 'Revalidate')], default='edit', max_length=16),
        ),
        migrations.AddField(
            model_name='historicalmemory',
            name='valid_from',
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='valid_from',
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name='historicalmemory',
            name='valid_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='valid_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='historicalmemory',
            name='superseded_by',
            field=models.CharField(blank=True, db_index=True, max_length=20, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='superseded_by',
            field=models.CharField(blank=True, db_index=True, max_length=20, null=True),
        ),
        migrations.RunPython(valid_from_creation, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='historicalmemory',
            name='valid_from',
            field=models.DateTimeField(),
        ),
        migrations.AlterField(
            model_name='memory',
            name='valid_from',
            field=models.DateTimeField(),
        ),
        migrations.CreateModel(
            name='MemorySlot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('user_id', models.CharField(max_length=128)),
                ('slot', models.CharField(max_length=200)),
                ('memory', models.ForeignKey(on_delete=models.deletion.CASCADE, related_name='slots', to='memories.memory')),
            ],
            options={
                'indexes': [models.Index(fields=['user_id', 'slot'], name='memories_me_user_id_e0ba05_idx')],
            },
        ),
        migrations.CreateModel(
            name='Conflict',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('user_id', models.CharField(max_length=128)),
                ('confidence', models.FloatField()),
                ('reason', models.CharField(max_length=500)),
                ('evidence', models.JSONField(blank=True, default=dict)),
                ('status', models.CharField(choices=[('open', 'Open'), ('accepted', 'Accepted'), ('rejected', 'Rejected')], default='open', max_length=16)),
                ('created_at', models.DateTimeField()),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('decided_by', models.CharField(blank=True, default='', max_length=150)),
                ('decision_reason', models.TextField(blank=True, default='')),
                ('newer', models.ForeignKey(on_delete=models.deletion.CASCADE, related_name='+', to='memories.memory')),
                ('older', models.ForeignKey(on_delete=models.deletion.CASCADE, related_name='+', to='memories.memory')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['user_id', 'status', 'created_at'], name='memories_co_user_id_3eaf47_idx')],
                'constraints': [models.UniqueConstraint(fields=('newer', 'older'), name='conflict_one_per_pair'), models.CheckConstraint(condition=models.Q(('confidence__gte', 0), ('confidence__lte', 1)), name='conflict_confidence_0_1')],
            },
        ),
    ]
