"""The policy page (admin): cleanup dry run and consolidation groups with content previews,
and the Apply buttons that enqueue the jobs on the "default" queue."""

import datetime as dt

import pytest

from memories import queue as job_queue
from memories.models import AuditEvent, Memory
from operations import policy
from tests.conftest import work
from tests.views.conftest import HX, ids, tags, text

# The PostgreSQL pass runs these (scripts/test -m postgres): JSON queries of past runs.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues"),
              pytest.mark.postgres]

OLD = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@pytest.fixture
def namespace(make_memory):
    """Two idle unimportant memories (forget), two idle important related ones (a group),
    and a fresh one (kept)."""
    return {
        "stale": [
            make_memory(f"an idle trivial note {n}", importance=0.1, created_at=OLD)
            for n in range(2)
        ],
        "group": [
            make_memory(
                "quarterly budget review with finance on Tuesday", importance=0.6, created_at=OLD
            ),
            make_memory(
                "finance wants the quarterly budget review slides", importance=0.7, created_at=OLD
            ),
        ],
        "fresh": make_memory("a fresh and unrelated fact", importance=0.2),
    }


def row_ids(body, section: str) -> list[str]:
    """Memory ids listed in one plan table (the one after the heading with id ``section``)."""
    out, inside = [], False
    for tag, a in tags(body):
        if tag == "h3":
            inside = a.get("id") == section
        elif inside and tag == "tr" and "data-memory-id" in a:
            out.append(a["data-memory-id"])
    return out


def test_it_shows_the_dry_run_with_previews(admin_role_client, namespace):
    resp = admin_role_client.get("/index/policy/", {"user_id": "u-a"})
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body
    assert {"cleanup-plan", "consolidation-plan", "policy-job"} <= ids(body)
    plan = policy.cleanup_plan(user_id="u-a")
    assert row_ids(body, "plan-forget") == plan.forget
    assert set(plan.forget) == {m.memory_id for m in namespace["stale"]}
    assert row_ids(body, "plan-consolidate") == plan.consolidate
    # One name for one thing: "consolidation" is the groups, not the idle memories kept.
    assert "Kept (idle, important enough to keep" in body
    assert "offered for consolidation" not in body.lower()
    assert "an idle trivial note 0" in body  # content previews
    group = [a for _, a in tags(body) if a.get("data-group") == "1"]
    assert group and "quarterly budget review with finance" in body
    assert namespace["fresh"].memory_id not in body
    # Nothing changed: it is a dry run.
    assert Memory.objects.filter(deleted_at__isnull=False).count() == 0


def test_without_a_namespace_it_asks_for_one(admin_role_client, namespace):
    resp = admin_role_client.get("/index/policy/")
    assert resp.status_code == 200 and "Choose a namespace" in text(resp)
    assert '<option value="u-a">' in text(resp)  # the datalist of namespaces


def test_a_bad_namespace_is_a_form_error(admin_role_client):
    resp = admin_role_client.get("/index/policy/", {"user_id": " u-a"})
    assert resp.status_code == 400 and "alert-error" in text(resp) and "white space" in text(resp)


def test_htmx_gets_the_policy_fragment(admin_role_client, namespace):
    resp = admin_role_client.get("/index/policy/", {"user_id": "u-a"}, headers=HX)
    assert resp.status_code == 200 and "<html" not in text(resp)
    assert text(resp).lstrip().startswith('<div id="policy">')


@pytest.mark.parametrize("client_name", ["viewer_client", "editor_client"])
def test_the_policy_is_for_admins(request, client_name, namespace):
    client = request.getfixturevalue(client_name)
    assert client.get("/index/policy/", {"user_id": "u-a"}).status_code == 403
    for url in ("/index/policy/cleanup/", "/index/policy/consolidate/"):
        resp = client.post(url, {"user_id": "u-a"}, headers=HX)
        assert resp.status_code == 403 and "needs the admin role" in text(resp)
    assert job_queue.get_queue("default").count == 0 and not AuditEvent.objects.exists()
    assert Memory.objects.filter(deleted_at__isnull=False).count() == 0


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_apply_cleanup_runs_the_job(admin_role_client, namespace):
    resp = admin_role_client.post("/index/policy/cleanup/", {"user_id": "u-a"}, headers=HX)
    assert resp.status_code == 200 and 'data-status="queued"' in text(resp)
    assert job_queue.get_queue("default").count == 1  # the default queue, as asked
    event = AuditEvent.objects.get(action="cleanup", actor="ada")
    assert event.target == "u-a" and event.data["job_id"].startswith("job_")
    work()
    forgotten = set(
        Memory.objects.filter(deleted_at__isnull=False).values_list("memory_id", flat=True)
    )
    assert forgotten == {m.memory_id for m in namespace["stale"]}
    body = text(admin_role_client.get(f"/index/jobs/{event.data['job_id']}/", headers=HX))
    assert 'data-status="finished"' in body and "forgotten <b>2</b>" in body


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_apply_consolidation_runs_the_job(admin_role_client, namespace):
    resp = admin_role_client.post("/index/policy/consolidate/", {"user_id": "u-a"}, headers=HX)
    assert resp.status_code == 400 and "reason" in text(resp)  # a reason is required
    resp = admin_role_client.post("/index/policy/consolidate/", {"user_id": "u-a",
                                                                 "reason": "duplicates"})
    assert resp.status_code == 302 and resp["Location"].startswith("/index/jobs/")
    work()
    merged = {
        tuple(sorted(m.metadata["consolidated_from"]))
        for m in Memory.objects.filter(source="consolidation")
    }
    # The two trivial notes name different numbers (0, 1): they are not merged.
    assert merged == {tuple(sorted(m.memory_id for m in namespace["group"]))}
    assert AuditEvent.objects.filter(action="consolidate", target="u-a").exists()


def test_apply_needs_a_valid_namespace_and_post(admin_role_client):
    resp = admin_role_client.post("/index/policy/cleanup/", {"user_id": ""}, headers=HX)
    assert resp.status_code == 400 and job_queue.get_queue("default").count == 0
    assert admin_role_client.get("/index/policy/cleanup/").status_code == 405
    assert admin_role_client.post("/index/policy/").status_code == 405
