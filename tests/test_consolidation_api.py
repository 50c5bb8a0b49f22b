"""Consolidation through the API: the dry run's plan, applying chosen groups, a merge that
never forgets what it returns, and its undo (rollback to version 0); the undo of a
forgetting-policy run. Real Redis, real database, real worker."""

import datetime as dt
import uuid

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memories import services
from tests.conftest import work

# The PostgreSQL pass runs these (scripts/test -m postgres): the merge's row locks.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

ARGON_LONG = "Use argon2 for password hashing. Rotate keys yearly."
ARGON_SHORT = "Use argon2 for password hashing."


def remember(api, content, user_id="u-a", **kw):
    resp = api.post("/memories", {"user_id": user_id, "content": content, **kw})
    assert resp.status_code in (200, 201), resp.content
    return resp.json()["memory_id"]


def found(api, query, user_id="u-a"):
    resp = api.post("/recall", {"user_id": user_id, "query": query, "match_mode": "all",
                                "limit": 100})
    assert resp.status_code == 200, resp.content
    return {r["memory_id"] for r in resp.json()["results"]}


def run_job(api, body):
    resp = api.post("/consolidate", body)
    assert resp.status_code == 202, resp.content
    work()
    job = api.get(f"/jobs/{resp.json()['job_id']}").json()
    assert job["status"] == "finished", job
    return job["result"]


def test_a_consolidation_never_forgets_what_it_returns(admin_api, empty_queues):
    """Issue 13: the merged text equals the longer source; the job reported that source as
    the merged memory and forgot both, so nothing was findable."""
    long_id = remember(admin_api, ARGON_LONG)
    short_id = remember(admin_api, ARGON_SHORT)
    result = run_job(admin_api, {"user_id": "u-a"})
    assert len(result["merged"]) == 1
    merged_id = result["merged"][0]
    assert merged_id not in (long_id, short_id)
    merged = admin_api.get(f"/memories/{merged_id}").json()
    assert merged["deleted_at"] is None and merged["content"] == ARGON_LONG
    assert merged["metadata"]["consolidated_from"] == [long_id, short_id]
    assert found(admin_api, "argon2 password hashing") == {merged_id}
    assert found(admin_api, "rotate keys yearly") == {merged_id}
    for source in (long_id, short_id):
        assert admin_api.get(f"/memories/{source}").json()["deleted_at"] is not None


def test_its_undo_is_a_rollback_to_version_0(admin_api, empty_queues):
    long_id = remember(admin_api, ARGON_LONG)
    short_id = remember(admin_api, ARGON_SHORT)
    merged_id = run_job(admin_api, {"user_id": "u-a"})["merged"][0]
    resp = admin_api.post(f"/memories/{merged_id}/rollback", {"version": 0, "reason": "undo"})
    assert resp.status_code == 200, resp.content
    assert resp.json()["deleted_at"] is not None
    assert found(admin_api, "argon2 password hashing") == {long_id, short_id}
    events = admin_api.get("/audit?action=consolidation_undo").json()["events"]
    assert [(e["target"], e["reason"]) for e in events] == [(merged_id, "undo")]


NOTES = [
    "Kestrel Health renews its Enterprise plan on 1 March; the account manager sends the quote.",
    "Oakridge Dental renews its Enterprise plan on 1 March; the account manager sends the quote.",
    "Harbor v2.6.0 ships on Thursday. Replies come from no-reply@mail.harbor.example.",
    "Harbor v2.6.0 ships on Thursday.",
    "青山零售的续约日期是 3 月 1 日，陈静跟进。",
    "陈静跟进青山零售的续约，日期是 3 月 1 日。",
    "Lunch on Friday at the noodle place.",
]


def test_the_dry_run_shows_threshold_groups_merged_text_and_similarity(admin_api):
    ids = [remember(admin_api, text) for text in NOTES]
    resp = admin_api.post("/consolidate", {"user_id": "u-a", "dry_run": True})
    assert resp.status_code == 200, resp.content
    plan = resp.json()
    assert 0 < plan["threshold"] <= 1
    assert [g["memory_ids"] for g in plan["groups"]] == [[ids[2], ids[3]], [ids[4], ids[5]]]
    first = plan["groups"][0]
    assert first["merged_text"] == NOTES[2]  # byte for byte: v2.6.0 and the address unchanged
    assert plan["threshold"] <= first["similarity"] <= 1
    assert first["group_id"].startswith("grp_")
    strict = admin_api.post("/consolidate", {"user_id": "u-a", "dry_run": True,
                                             "threshold": 0.99}).json()
    assert strict["threshold"] == 0.99 and strict["groups"] == []


def test_apply_merges_only_the_chosen_groups(admin_api, empty_queues):
    ids = [remember(admin_api, text) for text in NOTES]
    plan = admin_api.post("/consolidate", {"user_id": "u-a", "dry_run": True}).json()
    chosen = plan["groups"][1]
    result = run_job(admin_api, {"user_id": "u-a", "group_ids": [chosen["group_id"]],
                                 "reason": "same renewal"})
    assert len(result["merged"]) == 1
    merged = admin_api.get(f"/memories/{result['merged'][0]}").json()
    assert merged["metadata"]["consolidated_from"] == chosen["memory_ids"]
    assert merged["content"] == chosen["merged_text"]
    live = {i for i in ids if admin_api.get(f"/memories/{i}").json()["deleted_at"] is None}
    assert live == set(ids) - set(chosen["memory_ids"])


def test_apply_takes_explicit_groups_and_refuses_ones_that_name_other_things(admin_api,
                                                                            empty_queues):
    ids = [remember(admin_api, text) for text in NOTES]
    resp = admin_api.post("/consolidate", {"user_id": "u-a", "groups": [[ids[0], ids[1]]]})
    assert resp.status_code == 400 and resp.json()["error"]["field"] == "groups"
    resp = admin_api.post("/consolidate", {"user_id": "u-a", "group_ids": ["grp_000000000000"]})
    assert resp.status_code == 409 and resp.json()["error"]["field"] == "group_ids"
    result = run_job(admin_api, {"user_id": "u-a", "groups": [[ids[3], ids[2]]]})
    assert len(result["merged"]) == 1
    for bad in ({"threshold": 2}, {"max_members": 1}, {"groups": [[ids[0]]]}):
        resp = admin_api.post("/consolidate", {"user_id": "u-a", **bad})
        assert resp.status_code == 400, bad
        assert resp.json()["error"]["field"] == next(iter(bad))


@pytest.mark.parametrize("name", ["groups", "group_ids"])
def test_an_apply_names_at_most_500_groups(admin_api, name):
    """Each explicit group is checked with a query: one request names 500 at most."""
    many = ([[f"mem_{2 * n:016x}", f"mem_{2 * n + 1:016x}"] for n in range(501)]
            if name == "groups" else [f"grp_{n:012x}" for n in range(501)])
    resp = admin_api.post("/consolidate", {"user_id": "u-a", name: many})
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["field"] == name and "500" in resp.json()["error"]["message"]


def test_only_admins_consolidate(api):
    resp = api.post("/consolidate", {"user_id": "u-a", "dry_run": True})
    assert resp.status_code == 403


def _old(content, importance, user_id="u-a"):
    return services.memory_create(user_id=user_id, content=content, importance=importance,
                                  created_at=timezone.now() - dt.timedelta(days=400))[0]


def test_a_forgetting_policy_run_is_undone_in_one_action(admin_api, empty_queues):
    stale = [_old(f"stale low value note number {n}", 0.05) for n in range(3)]
    keep = _old("stale but important note", 0.9)
    resp = admin_api.post("/cleanup", {"user_id": "u-a"})
    assert resp.status_code == 202
    run_id = resp.json()["job_id"]
    work()
    result = admin_api.get(f"/jobs/{run_id}").json()["result"]
    assert result["forgotten"] == 3
    assert found(admin_api, "stale low value note") == set()
    resp = admin_api.post("/cleanup/undo", {"run_id": run_id})
    assert resp.status_code == 400 and resp.json()["error"]["field"] == "reason"
    resp = admin_api.post("/cleanup/undo", {"run_id": run_id, "reason": "policy too eager"})
    assert resp.status_code == 200, resp.content
    assert sorted(resp.json()["restored"]) == sorted(m.memory_id for m in stale)
    assert found(admin_api, "stale low value note") == {m.memory_id for m in stale}
    assert admin_api.get(f"/memories/{keep.memory_id}").json()["deleted_at"] is None
    events = admin_api.get("/audit?action=cleanup_undo").json()["events"]
    assert [(e["target"], e["reason"]) for e in events] == [(run_id, "policy too eager")]
    again = admin_api.post("/cleanup/undo", {"run_id": run_id, "reason": "twice"})
    assert again.status_code == 409
    assert admin_api.post("/cleanup/undo", {"run_id": "nope", "reason": "x"}).status_code == 404


# Random consolidations: sources made of the sentences of one fact, in any subset and order,
# with the separators people type; every source must stay findable by its own text.
POOLS = [
    ["Use argon2 for password hashing.", "Rotate keys yearly.", "Store the pepper in the vault.",
     "Hashes are checked on every login.", "This applies from v2.6.0 on.",
     "Mail no-reply@mail.harbor.example when a hash is upgraded."],
    ["密码哈希使用 argon2。", "每年轮换密钥。", "胡椒值存放在保险库里。", "每次登录都会校验哈希。",
     "从 v2.6.0 开始生效。", "升级哈希时通知 no-reply@mail.harbor.example。"],
]
sources = st.sampled_from(POOLS).flatmap(lambda pool: st.lists(
    st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True).flatmap(
        lambda sentences: st.sampled_from([" ", "  ", "\n", ""]).map(
            lambda sep: sep.join(sentences))),
    min_size=2, max_size=5))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sources)
@example(["Use argon2 for password hashing.Hashes are checked on every login.",
          "Use argon2 for password hashing.Rotate keys yearly."])
def test_every_source_is_findable_after_a_consolidation_and_after_its_undo(admin_api, texts):
    user_id = f"prop-{uuid.uuid4().hex[:8]}"
    ids = list(dict.fromkeys(remember(admin_api, t, user_id=user_id) for t in texts))
    assume(len(ids) >= 2)
    other = remember(admin_api, "Lunch on Friday at the noodle place.", user_id=user_id)
    resp = admin_api.post("/consolidate", {"user_id": user_id, "groups": [ids]})
    assert resp.status_code == 202, resp.content
    work()
    result = admin_api.get(f"/jobs/{resp.json()['job_id']}").json()["result"]
    merged_id = result["merged"][0]
    assert merged_id not in ids
    for text in texts:
        assert merged_id in found(admin_api, text, user_id=user_id), text
    assert other in found(admin_api, "noodle place", user_id=user_id)
    resp = admin_api.post(f"/memories/{merged_id}/rollback", {"version": 0, "reason": "undo"})
    assert resp.status_code == 200, resp.content
    for memory_id, text in zip(ids, dict.fromkeys(texts), strict=True):
        hits = found(admin_api, text, user_id=user_id)
        assert memory_id in hits and merged_id not in hits, text
