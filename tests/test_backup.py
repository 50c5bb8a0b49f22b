"""Backup -> wipe -> restore gives identical recall results; old schemas migrate."""

import pytest

from memories import services, store
from memories.models import Memory
from operations import backup
from search.memory_search import memory_search

# The PostgreSQL pass runs these (scripts/test -m postgres): the backup import (row locks, bulk
# inserts).
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def recall(query):
    return [(h.memory_id, round(h.score, 12)) for h in memory_search(
        user_id="u-a", query=query, limit=20, profile="bm25").results]


def test_backup_wipe_restore_gives_identical_recall(builtins, admin_api, redis_client):
    ms = [services.memory_create(user_id="u-a", content=f"backup memory {w} harbor")[0]
          for w in ("alpha", "beta", "gamma", "delta")]
    services.memory_update(memory_id=ms[0].memory_id, content="backup memory alpha edited harbor")
    services.memory_forget(memory_id=ms[3].memory_id)
    before = {q: recall(q) for q in ("harbor", "alpha", "delta")}
    doc = admin_api.get("/export?user_id=u-a").json()
    assert doc["schema_version"] == 5 and len(doc["memories"]) == 4
    # wipe: the namespace gets other content, then the backup replaces it cleanly
    services.memory_create(user_id="u-a", content="unrelated harbor note added later")
    resp = admin_api.call("post", "/import?mode=replace", doc)
    assert resp.status_code == 200 and resp.json()["restored"] == 4
    assert {q: recall(q) for q in ("harbor", "alpha", "delta")} == before
    assert Memory.objects.filter(user_id="u-a").count() == 4
    assert Memory.objects.get(pk=ms[0].memory_id).version == 2
    held = {store.text(i) for i in redis_client.smembers(store.key("u-a", "ids"))}
    assert held == {m.memory_id for m in ms[:3]}


def test_merge_import_dedups_and_migrates_schema_1(builtins, admin_api):
    services.memory_create(user_id="u-a", content="already here")
    doc = {"schema_version": 1, "memories": [
        {"user_id": "u-a", "content": "already here", "type": "long_term"},
        {"user_id": "u-a", "content": "brand new", "type": "long_term",
         "created_at": "2026-01-15T10:30:00"}]}
    resp = admin_api.call("post", "/import", doc)
    assert resp.json() == {"created": 1, "deduplicated": 1}
    assert Memory.objects.filter(user_id="u-a").count() == 2


def test_import_rejects_bad_documents_and_changes_nothing(builtins, admin_api, api):
    assert admin_api.call("post", "/import", {"schema_version": 9, "memories": []}).status_code == 400
    bad = {"schema_version": 2, "memories": [{"user_id": " x", "content": "y"}]}
    assert admin_api.call("post", "/import?mode=replace", bad).status_code == 400
    assert admin_api.call("post", "/import", "not json").status_code == 400
    assert api.get("/export?user_id=u-a").status_code == 403
    assert Memory.objects.count() == 0
    with pytest.raises(Exception):  # noqa: B017 - InvalidInput
        backup.import_memories(doc={"memories": []}, mode="sideways")
