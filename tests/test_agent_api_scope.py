"""A token restricted to agents against what reaches every agent's memories: the ranking lab
(evaluations, judgments, query sets, runs), the audit trail, the index health, reindex,
reconcile and job status are a 403 naming ``agent_id`` for it (the console's pages, for a
person, are not); an ``Idempotency-Key`` is the token's own; a cursor whose moment is out of
range is a 400 naming ``cursor`` on every list."""

import base64
import json

import pytest

from lab.models import EvalRun, QuerySet
from memories.models import Memory
from tests.conftest import ApiClient, work
from tests.helpers import create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def planner_admin(admin_user):
    """An admin's token restricted to the agent ``planner``."""
    return ApiClient(admin_user, agents=["planner"])


@pytest.fixture
def lab_setup(admin_api):
    """A memory of agent ``reviewer``, a query set over its namespace, a run of it, and a
    reindex job: what an agent-restricted token must not reach."""
    theirs = create("Reviewer booked the Lisbon flight", agent_id="reviewer")
    work()
    qs = admin_api.post("/query-sets", {"name": "trip", "user_id": "u-a",
                                        "queries": ["Lisbon flight"]})
    assert qs.status_code == 201, qs.content
    run = admin_api.post("/runs", {"name": "r1", "query_set": qs.json()["id"],
                                   "profiles": ["bm25"], "k": 5})
    assert run.status_code == 201, run.content
    job = admin_api.post("/reindex", {"user_id": "u-a"})
    assert job.status_code == 202, job.content
    return {"memory_id": theirs.memory_id, "query_set": qs.json()["id"],
            "run": run.json()["id"], "job_id": job.json()["job_id"]}


def _calls(s):
    """(method, path, body) of every operation refused to a token restricted to agents."""
    evaluate = {"queries": [{"user_id": "u-a", "query": "Lisbon flight",
                             "relevant": [s["memory_id"]]}]}
    return [
        ("post", "/evaluate", evaluate),
        ("get", "/judgments?user_id=u-a", None),
        ("post", "/judgments", {"user_id": "u-a", "query": "Lisbon flight",
                                "memory_id": s["memory_id"], "grade": 3}),
        ("get", "/query-sets", None),
        ("post", "/query-sets", {"name": "mine", "user_id": "u-a", "queries": ["flight"]}),
        ("get", f"/query-sets/{s['query_set']}", None),
        ("patch", f"/query-sets/{s['query_set']}", {"queries": ["hotel"]}),
        ("get", "/runs", None),
        ("post", "/runs", {"name": "r2", "query_set": s["query_set"], "profiles": ["bm25"]}),
        ("get", f"/runs/{s['run']}", None),
        ("get", f"/runs/compare?a={s['run']}&b={s['run']}", None),
        ("get", "/audit", None),
        ("get", f"/audit?target={s['memory_id']}", None),
        ("get", "/index/health", None),
        ("post", "/reindex", {"user_id": "u-a"}),
        ("post", "/reindex", None),
        ("post", "/index/reconcile", None),
        ("get", f"/jobs/{s['job_id']}", None),
        ("get", "/webhooks", None),
        ("post", "/webhooks", {"url": "http://127.0.0.1:9/hook", "events": ["memory.created"]}),
    ]


def test_lab_audit_health_and_jobs_refuse_a_token_restricted_to_agents(
        admin_api, planner_admin, lab_setup):
    before = (QuerySet.objects.count(), EvalRun.objects.count())
    for method, path, body in _calls(lab_setup):
        resp = planner_admin.call(method, path, body)
        assert resp.status_code == 403, (method, path, resp.content)
        error = resp.json()["error"]
        assert error["code"] == "forbidden" and error["field"] == "agent_id", (path, error)
        assert "every agent" in error["message"], (path, error)
        assert lab_setup["memory_id"] not in resp.content.decode(), path
    assert (QuerySet.objects.count(), EvalRun.objects.count()) == before
    assert not planner_admin.get("/audit").content.count(b"reindex")
    # The same calls by the same admin's unrestricted token answer (the refusal is the
    # token's restriction, not the operation's).
    for method, path, body in _calls(lab_setup):
        if (path.startswith("/index/reconcile") or (path == "/reindex" and body is None)
                or path == "/webhooks" and method == "post"):
            continue  # every namespace's jobs: enough that one reindex was started; a
            # webhook to an unreachable port is refused to anyone (its address)
        resp = admin_api.call(method, path, body)
        assert resp.status_code in (200, 201, 202), (method, path, resp.content)


def test_a_token_restricted_to_namespaces_and_agents_is_refused_as_well(admin_user, lab_setup):
    both = ApiClient(admin_user, namespaces=["u-a"], agents=["planner"])
    resp = both.post("/evaluate", {"queries": [{"user_id": "u-a", "query": "Lisbon flight",
                                                "relevant": [lab_setup["memory_id"]]}]})
    assert resp.status_code == 403 and resp.json()["error"]["field"] == "agent_id"
    resp = both.post("/reindex", {"user_id": "u-a"})
    assert resp.status_code == 403 and resp.json()["error"]["field"] == "agent_id"


def test_the_console_pages_still_serve_people(admin_role_client, lab_setup):
    """The console's users are people, never tokens: its lab, activity and index pages are
    not refused."""
    for path in ("/lab/judgments/", "/lab/query-sets/", f"/lab/query-sets/{lab_setup['query_set']}/",
                 "/lab/runs/", f"/lab/runs/{lab_setup['run']}/", "/activity/", "/index/",
                 f"/index/jobs/{lab_setup['job_id']}/"):
        resp = admin_role_client.get(path)
        assert resp.status_code == 200, (path, resp.status_code)


# --- Idempotency-Key: per token -----------------------------------------------------------


def _batch(client: ApiClient, items, key):
    return client.client.post(
        "/api/v1/memories/batch", data=json.dumps({"memories": items}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {client.token}", "Idempotency-Key": key})


def test_an_idempotency_key_is_not_replayed_to_another_token_of_the_same_user(editor):
    alice = ApiClient(editor, namespaces=["alice"])
    bob = ApiClient(editor, namespaces=["bob"])
    items = [{"user_id": "alice", "content": "Alice keeps her passport in the drawer"}]
    first = _batch(alice, items, "same-key")
    assert first.status_code == 201, first.content
    assert first.json()["results"][0]["status"] == "created"
    other = _batch(bob, items, "same-key")
    assert "Idempotent-Replayed" not in other.headers
    result = other.json()["results"][0]
    assert result["status"] == "error" and result["error"]["field"] == "user_id", result
    assert first.json()["results"][0]["memory_id"] not in other.content.decode()
    again = _batch(alice, items, "same-key")  # the same token still replays
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Memory.objects.filter(user_id="alice").count() == 1


# --- cursors with a moment out of range ---------------------------------------------------


def _cursor(key) -> str:
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


LATE = "9999-12-31T23:59:59-14:00"  # past year 9999 in UTC
EARLY = "0001-01-01T00:00:00+14:00"  # before year 1 in UTC


@pytest.mark.parametrize("moment", [LATE, EARLY])
@pytest.mark.parametrize(("path", "key"), [
    ("/memories?user_id=alice", ["{t}", "mem_x"]),
    ("/conflicts?user_id=alice", ["{t}", 5]),
    ("/conflicts", ["{t}", 5]),
    ("/runs", ["{t}", 5]),
    ("/sessions?user_id=alice", ["{t}", "ses_x"]),
    ("/audit", ["{t}", 0, 5]),
])
def test_a_cursor_whose_moment_is_out_of_range_is_a_400_naming_it(admin_api, path, key, moment):
    cursor = _cursor([moment if v == "{t}" else v for v in key])
    sep = "&" if "?" in path else "?"
    resp = admin_api.get(f"{path}{sep}cursor={cursor}")
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["field"] == "cursor"


def test_a_cursor_at_the_edges_of_the_range_still_pages(admin_api):
    """A moment just inside years 1-9999 in UTC is a cursor: the range check refuses only
    what no database keeps."""
    create("a fact for the list", user_id="alice")
    for moment in ("9999-12-31T23:59:59+00:00", "0001-01-01T00:00:00+00:00",
                   "9999-12-31T09:59:59-14:00"):
        resp = admin_api.get(f"/memories?user_id=alice&cursor={_cursor([moment, 'mem_x'])}")
        assert resp.status_code == 200, (moment, resp.content)
        resp = admin_api.get(f"/runs?cursor={_cursor([moment, 5])}")
        assert resp.status_code == 200, (moment, resp.content)
