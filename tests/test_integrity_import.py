"""Import documents: every item error is a 400 naming the item; a replace whose document names
a namespace but holds no memories empties it; an export → import round trip keeps every
field of every memory, field by field."""

import datetime as dt

import pytest
from django.utils import timezone

from memories import services
from memories.models import Memory
from operations import backup
from search.memory_search import memory_search
from tests.helpers import create

# The PostgreSQL pass runs these (scripts/test -m postgres): the backup import (row locks, bulk
# inserts).
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.mark.parametrize("mode", ["merge", "replace"])
@pytest.mark.parametrize("doc", [
    pytest.param({"schema_version": 2, "memories": [1]}, id="v2-number-item"),
    pytest.param({"schema_version": 1, "memories": [1]}, id="v1-number-item"),
    pytest.param({"schema_version": 1, "memories": ["text"]}, id="v1-string-item"),
    pytest.param({"schema_version": 2, "memories": [None]}, id="v2-null-item"),
    pytest.param({"schema_version": 2, "memories": [[]]}, id="v2-list-item"),
    pytest.param({"schema_version": 2, "memories": [
        {"user_id": "u-a", "content": "fine"}, {"user_id": "u-a", "content": 5}]}, id="bad-content"),
    pytest.param({"schema_version": 2, "memories": [
        {"user_id": "u-a", "content": "fine"},
        {"user_id": "u-a", "content": "x", "created_at": 12}]}, id="bad-date-type"),
    pytest.param({"schema_version": 2, "memories": [
        {"user_id": "u-a", "content": "fine"},
        {"user_id": "u-a", "content": "x", "bogus": 1}]}, id="unknown-field"),
    pytest.param({"schema_version": 2, "memories": [
        {"user_id": "u-a", "content": "fine"},
        {"user_id": "u-a", "content": "x", "deleted_by": 3}]}, id="bad-deleted-by"),
])
def test_every_item_error_is_a_400_naming_the_item(admin_api, doc, mode):
    create("kept as it was")
    resp = admin_api.post(f"/import?mode={mode}", doc)
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    bad = len(doc["memories"]) - 1
    assert error["index"] == bad
    assert error["message"].startswith(f"memories[{bad}]")
    assert error["message"].count("memories[") == 1  # named once, not memories[n].memories[n]
    assert list(Memory.objects.values_list("content", flat=True)) == ["kept as it was"]


def test_schema_1_documents_import(admin_api):
    doc = {"schema_version": 1, "memories": [
        {"memory_id": "mem_00000000000000a1", "user_id": "u-a", "content": "schema one note",
         "type": "long_term", "importance": 0.4, "created_at": "2026-01-15T10:30:00"}]}
    for mode in ("merge", "replace"):
        resp = admin_api.post(f"/import?mode={mode}", doc)
        assert resp.status_code == 200, resp.content
    assert Memory.objects.get().content == "schema one note"


def test_replace_with_a_duplicate_memory_id_is_a_400_naming_the_item(admin_api):
    create("kept as it was")
    item = {"memory_id": "mem_00000000000000b2", "user_id": "u-a", "type": "long_term"}
    doc = {"schema_version": 2, "user_id": "u-a", "memories": [
        {**item, "content": "first"}, {**item, "content": "second"}]}
    resp = admin_api.post("/import?mode=replace", doc)
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    assert error["field"] == "memory_id" and error["index"] == 1
    assert "mem_00000000000000b2" in error["message"]
    assert list(Memory.objects.values_list("content", flat=True)) == ["kept as it was"]


def test_replace_with_an_empty_document_empties_its_namespace(admin_api):
    """B04: the document names u-x and holds no memories: u-x is emptied, others stay."""
    for text in ("coffee with oat milk", "coffee beans from Kenya"):
        create(text, user_id="u-x")
    other = create("coffee in another namespace", user_id="u-y")
    resp = admin_api.post("/import?mode=replace",
                          {"schema_version": 2, "user_id": "u-x", "memories": []})
    assert resp.status_code == 200, resp.content
    assert resp.json()["replaced_namespaces"] == 1 and resp.json()["removed"] == 2
    assert not Memory.objects.filter(user_id="u-x").exists()
    assert memory_search(user_id="u-x", query="coffee", limit=5).results == []
    assert [h.memory_id for h in memory_search(user_id="u-y", query="coffee",
                                               limit=5).results] == [other.memory_id]


def test_replace_with_memories_of_another_namespace_than_named_is_refused(admin_api):
    create("coffee stays", user_id="u-x")
    doc = {"schema_version": 2, "user_id": "u-x", "memories": [
        {"user_id": "u-y", "content": "wrong place", "type": "long_term"}]}
    resp = admin_api.post("/import?mode=replace", doc)
    assert resp.status_code == 400
    assert resp.json()["error"]["index"] == 0 and resp.json()["error"]["field"] == "user_id"
    assert list(Memory.objects.values_list("content", flat=True)) == ["coffee stays"]


def test_replace_with_no_namespace_at_all_is_refused(admin_api):
    create("coffee stays", user_id="u-x")
    resp = admin_api.post("/import?mode=replace", {"schema_version": 2, "memories": []})
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == "user_id"
    assert Memory.objects.count() == 1


ROUND_TRIP_FIELDS = backup.FIELDS + ("accessed_at", "content_hash")


def test_an_export_import_round_trip_keeps_every_field(admin_api, api):
    now = timezone.now().replace(microsecond=0)
    long = create("Alice prefers green tea, recalled today", tags=["drink", "prefs"],
                  keywords=["tea"], metadata={"dia_id": "D1:1", "nested": {"a": [1, 2]}},
                  source="chat", author="alice", context="the previous turn about drinks",
                  importance=0.7, conversation_id="c-1",
                  created_at=now - dt.timedelta(days=200))
    short = create("a short-term note", type="short_term", ttl_seconds=3600)
    gone = create("forgotten note")
    services.memory_update(memory_id=long.memory_id, importance=0.2, reason="lower")
    services.memory_forget(memory_id=gone.memory_id, reason="wrong")
    # Recalled today: accessed_at and access_count move (through the API's recall).
    assert api.post("/recall", {"user_id": "u-a", "query": "green tea"}).status_code == 200
    before = {m["memory_id"]: m for m in
              (admin_api.get(f"/memories/{i}").json()
               for i in (long.memory_id, short.memory_id, gone.memory_id))}
    assert before[long.memory_id]["accessed_at"] is not None
    assert before[long.memory_id]["access_count"] == 1
    doc = admin_api.get("/export?user_id=u-a").json()
    assert admin_api.post("/import?mode=replace", doc).status_code == 200
    for memory_id, was in before.items():
        now_ = admin_api.get(f"/memories/{memory_id}").json()
        for field in ROUND_TRIP_FIELDS:
            assert now_[field] == was[field], (memory_id, field)
    # The forgetting policy sees today's recall, not a memory idle for 200 days.
    from operations.policy import cleanup_plan

    plan = cleanup_plan(user_id="u-a").as_dict()
    assert long.memory_id not in str(plan)
