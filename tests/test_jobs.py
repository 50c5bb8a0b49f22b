"""Jobs run through a real django-rq worker in burst mode on the real Redis."""

import pytest
from django.db import transaction

from memories import queue as job_queue
from memories import services, store
from memories.models import Memory
from operations import jobs
from tests.conftest import work
from tests.helpers import postings_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_queues")]


def test_b26_no_job_and_no_redis_state_after_a_rollback(builtins):
    with pytest.raises(RuntimeError), transaction.atomic():
        m, _ = services.memory_create(user_id="u-a", content="quartz memory")
        job_queue.enqueue(jobs.reindex_job, "u-a")
        raise RuntimeError("boom")
    assert job_queue.get_queue("index").count == 0
    assert postings_of("u-a", "quartz") == set()
    assert not store.get_client().exists(store.key("u-a", "m", m.memory_id))


def test_b26_the_job_runs_after_commit_and_finds_the_memory(builtins):
    with transaction.atomic():
        m, _ = services.memory_create(user_id="u-a", content="quartz memory")
        job_id = job_queue.enqueue(jobs.reindex_job, "u-a")
        assert job_queue.get_queue("index").count == 0  # not before the commit
    assert postings_of("u-a", "quartz") == {m.memory_id}
    work()
    status = jobs.job_status(job_id)
    assert status["status"] == "finished" and status["progress"] == 1.0
    assert status["result"]["indexed"] == 1
    assert postings_of("u-a", "quartz") == {m.memory_id}


def test_it_reports_a_failed_job_with_its_error(builtins):
    job_id = job_queue.enqueue(jobs.reindex_job, "u-a", "unexpected-argument")
    work()
    status = jobs.job_status(job_id)
    assert status["status"] == "failed" and "TypeError" in status["error"]
    # It was retried once before being marked failed (what a worker's death also gets).
    from rq.job import Job

    assert Job.fetch(job_id, connection=job_queue.get_connection()).retries_left == 0


def test_it_repairs_exactly_the_drifted_memories(builtins, redis_client, admin_api):
    ms = [services.memory_create(user_id="u-a", content=f"drift memory {n}")[0]
          for n in range(4)]
    redis_client.delete(store.key("u-a", "m", ms[0].memory_id))
    redis_client.hset(store.key("u-a", "m", ms[1].memory_id), "version", "9")
    Memory.objects.filter(pk=ms[2].memory_id).update(content="changed behind our back", version=2)
    health = admin_api.get("/index/health").json()
    assert health["drift"] == 3 and set(health["drifted"]) == {m.memory_id for m in ms[:3]}
    resp = admin_api.post("/index/reconcile")
    assert resp.status_code == 202
    work()
    assert admin_api.get(f"/jobs/{resp.json()['job_id']}").json()["status"] == "finished"
    assert admin_api.get("/index/health").json()["drift"] == 0
    assert postings_of("u-a", "behind") == {ms[2].memory_id}


def test_it_starts_a_reindex_from_the_api(builtins, admin_api, api):
    services.memory_create(user_id="u-a", content="api reindex")
    assert api.post("/reindex", {"user_id": "u-a"}).status_code == 403
    resp = admin_api.post("/reindex", {"user_id": "u-a"})
    assert resp.status_code == 202
    work()
    body = admin_api.get(f"/jobs/{resp.json()['job_id']}").json()
    assert body["status"] == "finished" and body["result"]["generation"] == 1
    assert admin_api.get("/jobs/job_nope").status_code == 404
    assert admin_api.get("/jobs/%E5%91%A8%E5%8D%9A").status_code == 404  # found by the fuzz


def test_it_keeps_one_run_of_each_periodic_job_scheduled(builtins):
    from rq.registry import ScheduledJobRegistry

    jobs.schedule_periodic()
    jobs.schedule_periodic()
    registry = ScheduledJobRegistry(queue=job_queue.get_queue("index"))
    for job_id in (jobs.PERIODIC_RECONCILE_ID, jobs.PERIODIC_ACCESS_FOLD_ID,
                   jobs.PERIODIC_RECALL_LOG_ID):
        assert registry.get_job_ids().count(job_id) == 1
        registry.remove(job_id, delete_job=True)
