"""Session and Message, moved out of the memories app with their tables (``db_table`` keeps the old
names): state only, no table is created, renamed or copied."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('memories', '0011_session_counters'),
    ]

    operations = [
        # The tables exist (created by memories); only Django's model state moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Session',
                    fields=[
                        ('session_id', models.CharField(max_length=128, primary_key=True, serialize=False)),
                        ('user_id', models.CharField(db_index=True, max_length=128)),
                        ('agent_id', models.CharField(blank=True, default='', max_length=128)),
                        ('system_prompt', models.TextField(blank=True, default='')),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('summary', models.TextField(blank=True, default='')),
                        ('summary_upto_seq', models.PositiveIntegerField(default=0)),
                        ('last_seq', models.PositiveIntegerField(default=0)),
                        ('unfolded_chars', models.PositiveBigIntegerField(default=0)),
                        ('ttl_seconds', models.PositiveIntegerField(default=3600)),
                        ('created_at', models.DateTimeField()),
                        ('updated_at', models.DateTimeField()),
                    ],
                    options={
                        'db_table': 'memories_session',
                        'ordering': ['-updated_at', 'session_id'],
                    },
                ),
                migrations.CreateModel(
                    name='Message',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('seq', models.PositiveIntegerField()),
                        ('role', models.CharField(max_length=16)),
                        ('content', models.TextField()),
                        ('ts', models.DateTimeField()),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='agent_sessions.session')),
                    ],
                    options={
                        'db_table': 'memories_message',
                        'ordering': ['session', 'seq'],
                        'constraints': [models.UniqueConstraint(fields=('session', 'seq'), name='message_session_seq')],
                    },
                ),
            ],
        ),
    ]
