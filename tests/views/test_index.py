"""The Index page: health, drift, namespaces, queues, failed jobs (retry), reindex and
reconcile with the HTMX progress partial, job history; Redis down is a message, not a 500.

Jobs run through a real django-rq worker in burst mode on the real Redis (tests/test_jobs.py).
"""

import pytest
from rq.job import Job

from memories import queue as job_queue
from memories import services, store
from memories.models import AuditEvent, Memory
from operations import jobs
from tests.conftest import work
from tests.helpers import postings_of
from tests.views.conftest import HX, attr_values, ids, tags, text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues")]


def job_id_of(body) -> str:
    (value,) = [a["data-job-id"] for _, a in tags(body) if "data-job-id" in a] or [None]
    return value


def progress_attrs(body) -> dict[str, str]:
    return next(a for _, a in tags(body) if a.get("id") == "job-progress")


@pytest.fixture
def three(make_memory):
    return [make_memory(f"index page memory {n}") for n in range(3)]


# --- the page ---------------------------------------------------------------------------------


def test_it_shows_health_and_drift(viewer_client, make_memory, redis_client):
    ms = [make_memory(f"drift memory {n}") for n in range(3)]
    make_memory("another namespace", user_id="u-b")
    redis_client.delete(store.key("u-a", "m", ms[0].memory_id))  # drift on purpose
    resp = viewer_client.get("/index/")
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body
    assert {"index-health", "drift", "namespaces-table", "queues", "job-history"} <= ids(body)
    assert 'id="stat-in-db">4<' in body and 'id="stat-drift">1<' in body
    assert f'href="/memories/{ms[0].memory_id}/"' in body  # the drifted id links to its page
    assert "u-a" in body and "u-b" in body and '<th class="num">avgdl</th>' in body
    assert 'id="stat-redis-memory">' in body and "waiting" in body  # Redis memory, queues
    assert "No jobs yet." in body
    # A viewer sees the numbers, not the buttons.
    assert "reindex-form" not in ids(body) and "Starting jobs needs the admin role." in body


def test_it_shows_the_recall_hits_waiting_for_a_fold(viewer_client, three, admin_api):
    from memories import access

    access.access_record(user_id="u-a", memory_ids=[m.memory_id for m in three[:2]])
    body = text(viewer_client.get("/index/"))
    assert "2 memories with recall hits not yet in the database" in body
    assert admin_api.get("/index/health").json()["access_pending"] == {
        "namespaces": 1, "memories": 2, "fold_every_seconds": 30}
    access.access_fold()
    assert "0 memories with recall hits" in text(viewer_client.get("/index/"))


def test_no_drift_says_so(viewer_client, three):
    body = text(viewer_client.get("/index/"))
    assert 'id="stat-drift">0<' in body and "no-drift" in ids(body)


def test_an_orphan_in_redis_is_listed_without_a_link(admin_user, admin_role_client, make_memory):
    m = make_memory("to be purged while redis is away")
    key = store.key("u-a", "m", m.memory_id)
    saved = store.get_client().hgetall(key)
    services.memory_purge(memory_id=m.memory_id, actor=admin_user)
    store.get_client().hset(key, mapping=saved)  # Redis still holds the purged memory
    store.get_client().sadd(store.key("u-a", "ids"), m.memory_id)
    body = text(admin_role_client.get("/index/"))
    assert m.memory_id in body and f'href="/memories/{m.memory_id}/"' not in body
    assert "orphan" in body


def test_htmx_gets_the_health_fragment(viewer_client, three):
    resp = viewer_client.get("/index/", headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="index-health"') and "job-history" in ids(body)
    assert "reindex-form" not in ids(body) and "HX-Request" in resp["Vary"]
    # It reloads itself when a job is started or ends on the page.
    (health,) = [a for _, a in tags(body) if a.get("id") == "index-health"]
    assert health["hx-trigger"] == "job-started from:body, job-done from:body"
    assert health["hx-get"] == "/index/"


def test_admins_see_the_job_buttons(admin_role_client, three):
    body = text(admin_role_client.get("/index/"))
    forms = {a.get("id"): a for t, a in tags(body) if t == "form"}
    assert forms["reindex-form"]["action"] == forms["reindex-form"]["hx-post"] == "/index/reindex/"
    assert (
        forms["reindex-form"]["hx-target"] == "#job-area"
        and forms["reindex-form"]["method"] == "post"
    )
    assert forms["reconcile-form"]["hx-post"] == "/index/reconcile/"
    assert "u-a" in attr_values(body, "value")  # reindex one namespace
    assert "job-area" in ids(body)


def test_index_query_count_is_pinned(viewer_client, make_memory, django_assert_num_queries):
    for n in range(6):
        make_memory(f"pinned {n}", user_id=f"u-{n % 2}")
    AuditEvent.objects.create(actor="ada", action="reindex", target="*", data={"job_id": "job_x"})
    # session, user, role groups; health (drift computed now, none cached yet): the
    # namespaces once + one per namespace (2); job history; rows Redis cannot take
    # (unindexable). Live counts per namespace come
    # with the drift. (No drifted ids: no existence check.)
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(9):
        assert viewer_client.get("/index/").status_code == 200


def test_the_page_refuses_post_and_the_buttons_refuse_get(admin_role_client):
    assert admin_role_client.post("/index/").status_code == 405
    for url in ("/index/reindex/", "/index/reconcile/", "/index/jobs/job_x/retry/"):
        assert admin_role_client.get(url).status_code == 405


# --- reindex with progress ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_an_admin_reindexes_with_a_progress_bar(admin_role_client, three):
    resp = admin_role_client.post("/index/reindex/", {"user_id": ""}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    bar = progress_attrs(body)
    assert bar["data-status"] == "queued"
    # Polls itself every second while the job is queued or started.
    assert bar["hx-trigger"] == "every 1s" and bar["hx-swap"] == "outerHTML"
    job_id = bar["hx-get"].split("/")[3]
    assert bar["hx-get"] == f"/index/jobs/{job_id}/"
    assert '"job-started"' in resp["HX-Trigger"]  # the page reloads its job history
    event = AuditEvent.objects.get(action="reindex")
    assert (event.actor, event.target, event.data) == ("ada", "*", {"job_id": job_id})
    assert job_queue.get_queue("index").count == 1

    work()
    done = admin_role_client.get(f"/index/jobs/{job_id}/", headers=HX)
    body = text(done)
    bar = progress_attrs(body)
    assert done.status_code == 200 and bar["data-status"] == "finished"
    assert "hx-trigger" not in bar  # polling stops
    assert 'id="job-count">' in body and "3 of 3 memories" in body and "100%" in body
    assert "namespaces <b>1</b>" in body and "indexed <b>3</b>" in body  # the result
    assert '"job-done"' in done["HX-Trigger"]  # the page refreshes its health numbers
    assert postings_of("u-a", "memory") == {m.memory_id for m in three}
    # The job history lists it with its state.
    page = text(admin_role_client.get("/index/"))
    assert job_id in page and "job-finished" in page


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_reindex_without_javascript_lands_on_the_job_page(admin_role_client, three):
    resp = admin_role_client.post("/index/reindex/", {"user_id": "u-a"})
    assert resp.status_code == 302 and resp["Location"].startswith("/index/jobs/job_")
    page = admin_role_client.get(resp["Location"])
    body = text(page)
    assert page.status_code == 200 and "<html" in body and "job-progress" in ids(body)
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in body  # reloads
    work()
    body = text(admin_role_client.get(resp["Location"]))
    assert 'data-status="finished"' in body and "noscript" not in body
    assert AuditEvent.objects.get(action="reindex").target == "u-a"


def test_reindex_of_a_bad_namespace_is_400(admin_role_client):
    resp = admin_role_client.post("/index/reindex/", {"user_id": " padded "}, headers=HX)
    assert resp.status_code == 400 and "white space" in text(resp)
    assert job_queue.get_queue("index").count == 0 and not AuditEvent.objects.exists()


@pytest.mark.parametrize("client_name", ["viewer_client", "editor_client"])
def test_only_admins_start_jobs(request, client_name, three):
    client = request.getfixturevalue(client_name)
    for url in ("/index/reindex/", "/index/reconcile/"):
        resp = client.post(url, {}, headers=HX)
        assert resp.status_code == 403 and "needs the admin role" in text(resp)
        page = client.post(url, {})
        assert page.status_code == 403 and "<html" in text(page)
    assert job_queue.get_queue("index").count == 0 and not AuditEvent.objects.exists()


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_reconcile_repairs_the_drift(admin_role_client, make_memory, redis_client):
    ms = [make_memory(f"reconcile me {n}") for n in range(3)]
    redis_client.delete(store.key("u-a", "m", ms[1].memory_id))
    assert 'id="stat-drift">1<' in text(admin_role_client.get("/index/"))
    resp = admin_role_client.post("/index/reconcile/", headers=HX)
    job_id = progress_attrs(resp.content)["hx-get"].split("/")[3]
    work()
    body = text(admin_role_client.get(f"/index/jobs/{job_id}/", headers=HX))
    assert 'data-status="finished"' in body and "stale <b>1</b>" in body
    assert 'id="stat-drift">0<' in text(admin_role_client.get("/index/"))


def test_the_job_page_of_an_unknown_job(viewer_client):
    assert viewer_client.get("/index/jobs/job_0000000000000000/").status_code == 404
    # To htmx: 286 (htmx's "stop polling") with a short explanation.
    resp = viewer_client.get("/index/jobs/job_0000000000000000/", headers=HX)
    assert resp.status_code == 286 and 'data-status="missing"' in text(resp)
    assert "hx-trigger" not in text(resp)


# --- failed jobs ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_failed_job_shows_its_error_and_can_be_retried(admin_role_client, viewer_client, three):
    job_id = job_queue.enqueue(jobs.reindex_job, "u-a", "unexpected-argument")
    work()
    body = text(viewer_client.get("/index/"))
    assert job_id in body and "TypeError" in body
    row = [a for t, a in tags(body) if t == "tr" and a.get("data-job-id") == job_id]
    assert row and "Retry</button>" not in body  # viewers see it, cannot retry
    resp = viewer_client.post(f"/index/jobs/{job_id}/retry/", headers=HX)
    assert resp.status_code == 403
    assert Job.fetch(job_id, connection=job_queue.get_connection()).get_status() == "failed"

    admin_page = text(admin_role_client.get("/index/"))
    assert f'hx-post="/index/jobs/{job_id}/retry/"' in admin_page
    resp = admin_role_client.post(f"/index/jobs/{job_id}/retry/", headers=HX)
    assert resp.status_code == 200 and 'data-status="queued"' in text(resp)
    assert job_queue.get_queue("index").count == 1
    event = AuditEvent.objects.get(action="job_retry")
    assert (event.actor, event.target) == ("ada", job_id)
    work()  # fails again (same arguments): back in the failed registry with its error
    again = text(admin_role_client.get(f"/index/jobs/{job_id}/", headers=HX))
    assert 'data-status="failed"' in again and "TypeError" in again


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_retry_refuses_a_job_that_has_not_failed(admin_role_client, three):
    job_id = job_queue.enqueue(jobs.reindex_job, "u-a")
    work()
    resp = admin_role_client.post(f"/index/jobs/{job_id}/retry/", headers=HX)
    assert resp.status_code == 400 and "nothing to retry" in text(resp)
    assert resp["HX-Retarget"] == "#messages"
    assert admin_role_client.post("/index/jobs/job_0000000000000000/retry/").status_code == 404


# --- Redis down -----------------------------------------------------------------------------


def _redis_down(monkeypatch):
    def boom(*args, **kwargs):
        raise store.RedisError("connection refused")

    monkeypatch.setattr("operations.health.index_health", boom)
    monkeypatch.setattr("memories.queue.enqueue", boom)
    monkeypatch.setattr("operations.jobs.job_status", boom)
    monkeypatch.setattr("memories.store.redis_available", lambda: False)


def test_redis_down_is_a_message_not_a_500(admin_role_client, three, monkeypatch):
    _redis_down(monkeypatch)
    resp = admin_role_client.get("/index/")
    body = text(resp)
    assert resp.status_code == 200 and {"redis-banner", "index-error"} <= ids(body)
    assert "Redis is unreachable" in body and "job-history" in ids(body)
    start = admin_role_client.post("/index/reindex/", {}, headers=HX)
    assert start.status_code == 503 and "Redis is unreachable" in text(start)
    assert start["HX-Retarget"] == "#messages"
    page = admin_role_client.post("/index/reconcile/")
    assert page.status_code == 503 and "redis-banner" in ids(page.content)
    assert not AuditEvent.objects.exists()  # nothing recorded for jobs that never ran
    poll = admin_role_client.get("/index/jobs/job_0000000000000000/", headers=HX)
    assert poll.status_code == 503 and "every 3s" in text(poll)  # keeps trying, slower


def test_a_memory_written_while_redis_was_down_shows_up_as_drift(viewer_client, make_memory):
    m = make_memory("written earlier")
    Memory.objects.filter(pk=m.memory_id).update(version=5)  # the mirror is now behind
    body = text(viewer_client.get("/index/"))
    assert 'id="stat-drift">1<' in body and m.memory_id in body
