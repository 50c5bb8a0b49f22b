"""The ``context`` profile (stemmed BM25 over content + neighbouring-turn context) becomes
the default: it measures best on LoCoMo (bench/quality.py, docs/benchmarks.md)."""

from django.db import migrations


def forwards(apps, schema_editor):
    RankingProfile = apps.get_model("memories", "RankingProfile")
    RankingProfile.objects.update(is_default=False)
    RankingProfile.objects.update_or_create(name="context", defaults=dict(
        ranker="bm25", k1=1.2, b=0.75, w_relevance=1.0, w_recency=0.0, w_importance=0.0,
        half_life_hours=720.0, stemming=True, synonyms=False, context=True, match_mode="any",
        builtin=False, is_default=True))


class Migration(migrations.Migration):
    dependencies = [("memories", "0004_memory_context")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
