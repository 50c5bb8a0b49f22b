"""Forgetting policy (dry run == applied) and consolidation (with its rollback)."""

import datetime as dt

import django_rq
import pytest
from django.utils import timezone

from memories import queue as job_queue
from memories import services
from memories.models import Memory
from operations import consolidate, jobs, policy
from search.memory_search import memory_search

# The PostgreSQL pass runs these (scripts/test -m postgres): cleanup and its undo (row locks, JSON
# queries).
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def old(content, importance, days=200, **kw):
    return services.memory_create(
        user_id="u-a", content=content, importance=importance,
        created_at=timezone.now() - dt.timedelta(days=days), **kw)[0]


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_the_dry_run_equals_the_applied_result(builtins, admin_api):
    low = old("stale low value note", 0.1)
    high = old("stale but important note", 0.8)
    fresh = services.memory_create(user_id="u-a", content="fresh note", importance=0.1)[0]
    extra = [services.memory_create(user_id="u-a", content=f"filler {n}", importance=0.5)[0]
             for n in range(3)]
    plan = admin_api.post("/cleanup", {"user_id": "u-a", "dry_run": True}).json()
    assert plan["forget"] == [low.memory_id] and plan["consolidate"] == [high.memory_id]
    assert fresh.memory_id not in plan["forget"]
    capped = policy.cleanup_plan(user_id="u-a", max_long_term=3)
    assert len(capped.archive) == 2 and low.memory_id not in capped.archive
    job_queue.get_queue("default").empty()
    resp = admin_api.post("/cleanup", {"user_id": "u-a"})
    assert resp.status_code == 202
    django_rq.get_worker(*job_queue.queue_names("default")).work(burst=True)
    forgotten = set(Memory.objects.filter(user_id="u-a", deleted_at__isnull=False)
                    .values_list("memory_id", flat=True))
    assert forgotten == set(plan["forget"]) | set(plan["archive"])
    assert Memory.objects.get(pk=low.memory_id).history.latest("history_date").history_change_reason == "policy"
    assert len(extra) == 3


def test_consolidation_merges_and_its_rollback_restores_the_sources(builtins, admin_user):
    a = services.memory_create(user_id="u-a", content="The Kafka cluster upgrade to 3.7 needs a maintenance window.", importance=0.4)[0]
    b = services.memory_create(user_id="u-a", content="Kafka cluster upgrade to 3.7: needs a maintenance window, Tom will announce it.", importance=0.6)[0]
    services.memory_create(user_id="u-a", content="Lunch on Friday at the noodle place.")
    services.memory_create(user_id="u-a", content="Dentist appointment next Tuesday.")
    plan = consolidate.consolidation_plan(user_id="u-a")
    assert [g.memory_ids for g in plan.groups] == [[a.memory_id, b.memory_id]]
    merged = consolidate.consolidate_group(memory_ids=plan.groups[0].memory_ids)
    assert merged.content == plan.groups[0].merged_text
    assert merged.importance == 0.7 and merged.metadata["consolidated_from"] == [a.memory_id,
                                                                                b.memory_id]
    assert {h.memory_id for h in memory_search(user_id="u-a", query="kafka upgrade").results} == {
        merged.memory_id}
    assert merged.history.first().kind == "consolidate"
    services.memory_rollback(memory_id=merged.memory_id, version=0, reason="bad merge",
                             actor=admin_user)
    found = {h.memory_id for h in memory_search(user_id="u-a", query="kafka upgrade").results}
    assert found == {a.memory_id, b.memory_id}
    assert Memory.objects.get(pk=merged.memory_id).deleted_at is not None


def test_the_consolidate_job_runs(builtins):
    services.memory_create(user_id="u-a", content="Alpha beta gamma delta notes one")
    services.memory_create(user_id="u-a", content="Alpha beta gamma delta notes one, again")
    services.memory_create(user_id="u-a", content="Something else entirely here")
    services.memory_create(user_id="u-a", content="Another unrelated memory today")
    result = jobs.consolidate_job("u-a")
    assert result["groups"] == 1 and len(result["merged"]) == 1 and result["skipped"] == []
