"""Audit feed and bulk actions."""

import pytest

from memories import services
from memories.models import Memory

# The PostgreSQL pass runs these (scripts/test -m postgres): JSON queries of the audit feed.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_b30_rollback_after_a_bulk_edit_touches_only_its_target(builtins, api, admin_api):
    ids = [api.post("/memories", {"user_id": "u-a", "content": f"bulk memory {n}",
                                  "importance": 0.5}).json()["memory_id"] for n in range(3)]
    resp = api.post("/memories/bulk", {"memory_ids": ids, "action": "importance",
                                       "importance": 0.9, "reason": "bulk raise"})
    assert resp.status_code == 200 and len(resp.json()["memories"]) == 3
    done = admin_api.post(f"/memories/{ids[0]}/rollback", {"version": 1, "reason": "too high"})
    assert done.status_code == 200
    rows = {m.memory_id: m for m in Memory.objects.filter(pk__in=ids)}
    assert rows[ids[0]].importance == 0.5 and rows[ids[0]].version == 3
    assert [rows[i].importance for i in ids[1:]] == [0.9, 0.9]
    assert [rows[i].version for i in ids[1:]] == [2, 2]


def test_bulk_is_all_or_nothing(builtins, api):
    good = api.post("/memories", {"user_id": "u-a", "content": "kept"}).json()["memory_id"]
    resp = api.post("/memories/bulk", {"memory_ids": [good, "mem_0000000000000000"],
                                       "action": "forget"})
    assert resp.status_code == 404
    assert Memory.objects.get(pk=good).deleted_at is None
    assert api.post("/memories/bulk", {"memory_ids": [good], "action": "explode"}).status_code == 400


def test_the_feed_lists_changes_and_admin_actions_newest_first(builtins, api, admin_api,
                                                               editor):
    memory_id = api.post("/memories", {"user_id": "u-a", "content": "audited"}).json()["memory_id"]
    api.patch(f"/memories/{memory_id}", {"content": "audited twice", "reason": "typo"})
    services.audit_record(actor="ada", action="reindex", target="u-a", reason="nightly")
    events = api.get("/audit").json()["events"]
    assert [e["action"] for e in events[:3]] == ["reindex", "edit", "create"]
    assert events[1] == {"at": events[1]["at"], "actor": "eddie", "action": "edit",
                         "target": memory_id, "reason": "typo"}
    assert [e["action"] for e in api.get(f"/audit?target={memory_id}").json()["events"]] == [
        "edit", "create"]
    assert api.get("/audit?actor=ada").json()["events"][0]["action"] == "reindex"
    assert api.get("/audit?since=yesterday").status_code == 400
    purged = api.post("/memories", {"user_id": "u-a", "content": "secret words"}).json()
    admin_api.delete(f"/memories/{purged['memory_id']}?purge=1&reason=gdpr")
    feed = str(api.get("/audit").json())
    assert "purge" in feed and "secret words" not in feed
