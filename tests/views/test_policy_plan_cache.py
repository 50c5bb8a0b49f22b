"""The Policy page's consolidation dry run at a bounded cost: computed once (a job above
``MEMORY_POLICY_INLINE_MAX`` live long-term memories, on the request below) and served from
Redis with the time it was computed; a change of the namespace marks it stale."""

import datetime as dt

import pytest
from django.test import override_settings

from memories import services
from memories.models import Memory
from operations import plan_cache
from tests.conftest import work
from tests.views.conftest import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues")]

OLD = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
PAIR = (
    "Harbor v2.6.0 ships on Thursday. Replies come from no-reply@mail.harbor.example.",
    "Harbor v2.6.0 ships on Thursday.",
)


@pytest.fixture
def pair(make_memory):
    return [make_memory(c, importance=0.6, created_at=OLD) for c in PAIR]


def groups_shown(body: str) -> int:
    return body.count('data-group-id="')


def test_a_small_namespace_is_computed_once_and_then_served(admin_role_client, pair):
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    assert groups_shown(body) == 1 and "Dry run computed" in body
    first = plan_cache.plan_cached(user_id="u-a")
    assert first is not None and not first["stale"]
    admin_role_client.get("/index/policy/", {"user_id": "u-a"})
    assert plan_cache.plan_cached(user_id="u-a")["computed_at"] == first["computed_at"]
    assert plan_cache.plan_cached(user_id="u-a")["stamp"] == first["stamp"]
    # A write marks it stale; a small namespace is computed again on the next visit.
    services.memory_create(user_id="u-a", content="an unrelated note about lunch")
    assert plan_cache.plan_cached(user_id="u-a")["stale"] is True
    admin_role_client.get("/index/policy/", {"user_id": "u-a"})
    assert plan_cache.plan_cached(user_id="u-a")["stale"] is False


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
@override_settings(MEMORY_POLICY_INLINE_MAX=1)
def test_a_large_namespace_is_computed_by_a_job(admin_role_client, pair):
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    assert groups_shown(body) == 0 and "computed by a background job" in body
    assert "No near-duplicates" not in body  # not known yet, so not claimed
    job_id = plan_cache.plan_job_id(user_id="u-a")
    assert job_id and f"/index/jobs/{job_id}/" in body
    admin_role_client.get("/index/policy/", {"user_id": "u-a"})
    assert plan_cache.plan_job_id(user_id="u-a") == job_id  # queued once
    work()
    assert plan_cache.plan_job_id(user_id="u-a") is None
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    assert groups_shown(body) == 1 and "Dry run computed" in body and "recompute-form" in body
    # Changed since: the old plan stays on the page, marked, while a job computes the new.
    services.memory_create(user_id="u-a", content="an unrelated note about lunch")
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    assert groups_shown(body) == 1 and "The namespace changed since" in body
    assert plan_cache.plan_job_id(user_id="u-a") is not None


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
@override_settings(MEMORY_POLICY_INLINE_MAX=1)
def test_recompute_runs_a_job_and_apply_all_uses_the_cached_plan(admin_role_client, pair):
    admin_role_client.get("/index/policy/", {"user_id": "u-a"})
    work()
    resp = admin_role_client.post("/index/policy/plan/", {"user_id": "u-a"})
    assert resp.status_code == 302 and resp["Location"].startswith("/index/policy/?user_id=u-a")
    assert plan_cache.plan_cached(user_id="u-a") is None
    assert plan_cache.plan_job_id(user_id="u-a") is not None
    work()
    entry = plan_cache.plan_cached(user_id="u-a")
    group = entry["groups"][0]
    assert plan_cache.cached_groups(user_id="u-a", group_ids=[group["group_id"]]) == [
        group["memory_ids"]
    ]
    resp = admin_role_client.post(
        "/index/policy/consolidate/",
        {"user_id": "u-a", "group_id": group["group_id"], "reason": "duplicates"},
    )
    assert resp.status_code == 302
    work()
    assert all(Memory.objects.get(memory_id=i).deleted_at is not None for i in group["memory_ids"])


def test_recompute_is_for_admins_and_checks_the_namespace(editor_client, admin_role_client):
    assert editor_client.post("/index/policy/plan/", {"user_id": "u-a"}).status_code == 403
    resp = admin_role_client.post("/index/policy/plan/", {"user_id": "nobody-here"})
    assert resp.status_code == 400 and "No such namespace" in text(resp)
