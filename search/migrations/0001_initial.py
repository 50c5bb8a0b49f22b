"""RankingProfile (with its history) and SynonymSet, moved out of the memories app with their tables (``db_table`` keeps the old
names): state only, no table is created, renamed or copied."""

import django.db.models.deletion
import simple_history.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('memories', '0011_session_counters'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The tables exist (created by memories); only Django's model state moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='RankingProfile',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=64, unique=True)),
                        ('ranker', models.CharField(choices=[('bm25', 'Bm25'), ('keyword', 'Keyword')], default='bm25', max_length=16)),
                        ('k1', models.FloatField(default=1.2)),
                        ('b', models.FloatField(default=0.75)),
                        ('w_relevance', models.FloatField(default=1.0)),
                        ('w_recency', models.FloatField(default=0.0)),
                        ('w_importance', models.FloatField(default=0.0)),
                        ('half_life_hours', models.FloatField(default=720)),
                        ('recency_from', models.CharField(default='created_at', max_length=16)),
                        ('stemming', models.BooleanField(default=False)),
                        ('synonyms', models.BooleanField(default=False)),
                        ('context', models.BooleanField(default=False)),
                        ('match_mode', models.CharField(choices=[('any', 'Any'), ('all', 'All'), ('all_then_any', 'All Then Any')], default='any', max_length=16)),
                        ('is_default', models.BooleanField(default=False)),
                        ('builtin', models.BooleanField(default=False)),
                        ('created_by', models.CharField(blank=True, default='', max_length=150)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'memories_rankingprofile',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='SynonymSet',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('terms', models.JSONField(default=list)),
                        ('created_by', models.CharField(blank=True, default='', max_length=150)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'memories_synonymset',
                        'ordering': ['id'],
                    },
                ),
                migrations.CreateModel(
                    name='HistoricalRankingProfile',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('name', models.CharField(db_index=True, max_length=64)),
                        ('ranker', models.CharField(choices=[('bm25', 'Bm25'), ('keyword', 'Keyword')], default='bm25', max_length=16)),
                        ('k1', models.FloatField(default=1.2)),
                        ('b', models.FloatField(default=0.75)),
                        ('w_relevance', models.FloatField(default=1.0)),
                        ('w_recency', models.FloatField(default=0.0)),
                        ('w_importance', models.FloatField(default=0.0)),
                        ('half_life_hours', models.FloatField(default=720)),
                        ('recency_from', models.CharField(default='created_at', max_length=16)),
                        ('stemming', models.BooleanField(default=False)),
                        ('synonyms', models.BooleanField(default=False)),
                        ('context', models.BooleanField(default=False)),
                        ('match_mode', models.CharField(choices=[('any', 'Any'), ('all', 'All'), ('all_then_any', 'All Then Any')], default='any', max_length=16)),
                        ('is_default', models.BooleanField(default=False)),
                        ('builtin', models.BooleanField(default=False)),
                        ('created_by', models.CharField(blank=True, default='', max_length=150)),
                        ('updated_at', models.DateTimeField(blank=True, editable=False)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical ranking profile',
                        'verbose_name_plural': 'historical ranking profiles',
                        'db_table': 'memories_historicalrankingprofile',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
            ],
        ),
    ]
