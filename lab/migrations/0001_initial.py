"""Judgment, QuerySet and EvalRun, moved out of the memories app with their tables (``db_table`` keeps the old
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
                    name='QuerySet',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('user_id', models.CharField(max_length=128)),
                        ('queries', models.JSONField(default=list)),
                        ('created_by', models.CharField(blank=True, default='', max_length=150)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'memories_queryset',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='Judgment',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('user_id', models.CharField(max_length=128)),
                        ('query', models.CharField(max_length=1000)),
                        ('memory_id', models.CharField(db_index=True, max_length=20)),
                        ('grade', models.PositiveSmallIntegerField()),
                        ('reviewer', models.CharField(max_length=150)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'memories_judgment',
                        'ordering': ['user_id', 'query', 'memory_id', 'reviewer'],
                        'indexes': [models.Index(fields=['user_id', 'query'], name='memories_ju_user_id_7fe264_idx')],
                        'constraints': [models.UniqueConstraint(fields=('user_id', 'query', 'memory_id', 'reviewer'), name='judgment_one_per_reviewer'), models.CheckConstraint(condition=models.Q(('grade__lte', 3)), name='judgment_grade_0_3')],
                    },
                ),
                migrations.CreateModel(
                    name='EvalRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200)),
                        ('created_by', models.CharField(blank=True, default='', max_length=150)),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('k', models.PositiveSmallIntegerField()),
                        ('reviewer', models.CharField(blank=True, default='', max_length=150)),
                        ('profiles', models.JSONField(default=list)),
                        ('index_stats', models.JSONField(default=dict)),
                        ('metrics', models.JSONField(default=dict)),
                        ('per_query', models.JSONField(default=list)),
                        ('unjudged', models.JSONField(default=list)),
                        ('query_set', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='runs', to='lab.queryset')),
                    ],
                    options={
                        'db_table': 'memories_evalrun',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
            ],
        ),
    ]
