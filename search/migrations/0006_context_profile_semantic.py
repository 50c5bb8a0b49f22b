"""The default profile as installed rescores semantically (``w_semantic`` 0.4): with the
time term and the worker's embeddings it measures best on LoCoMo dev through the API
(bench/quality.py, docs/benchmarks.md). A profile someone already tuned (w_semantic not 0) is
left as it is; a memory without an embedding yet keeps BM25."""

from django.db import migrations


def context_profile_rescores(apps, schema_editor):
    RankingProfile = apps.get_model("search", "RankingProfile")
    RankingProfile.objects.filter(name="context", w_semantic=0.0).update(w_semantic=0.4)


class Migration(migrations.Migration):
    dependencies = [("search", "0005_embedding_content_hash_index")]
    operations = [migrations.RunPython(context_profile_rescores, migrations.RunPython.noop)]
