"""One dedup rule on every write path (DESIGN.md): the same content hash, ``user_id``,
``conversation_id`` and ``type`` make one live memory. Paths that write a new memory return the
live one (200 + ``deduplicated``, or counted as deduplicated in an import); paths that change
an existing memory into a copy of another live one (PATCH, rollback, restore) are refused with
409 naming the other memory in ``error.duplicate_of``, and change nothing."""

import pytest

from memories import services
from memories.models import Memory
from tests.conftest import login
from tests.helpers import create

# The PostgreSQL pass runs these (scripts/test -m postgres): the dedup lookup's raw SQL and unique
# constraints.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def live(**filters):
    return list(Memory.objects.filter(deleted_at__isnull=True, **filters)
                .values_list("memory_id", flat=True))


def test_replace_import_with_the_same_text_under_two_ids_keeps_one(admin_api):
    item = {"user_id": "u-a", "type": "long_term", "content": "User prefers dark mode"}
    doc = {"schema_version": 2, "user_id": "u-a", "memories": [
        {**item, "memory_id": "mem_00000000000000a1", "created_at": "2026-01-01T00:00:00Z"},
        {**item, "memory_id": "mem_00000000000000a2", "created_at": "2026-01-02T00:00:00Z"},
        {**item, "content": "User prefers dark mode ", "memory_id": "mem_00000000000000a3"},
        {**item, "memory_id": "mem_00000000000000a4", "conversation_id": "c-1"}]}
    resp = admin_api.post("/import?mode=replace", doc)
    assert resp.status_code == 200, resp.content
    assert resp.json()["restored"] == 2 and resp.json()["deduplicated"] == 2
    assert sorted(live(user_id="u-a")) == ["mem_00000000000000a1", "mem_00000000000000a4"]
    found = admin_api.post("/recall", {"user_id": "u-a", "query": "dark mode", "limit": 10})
    assert sorted(r["memory_id"] for r in found.json()["results"]) == [
        "mem_00000000000000a1", "mem_00000000000000a4"]


def test_a_replace_import_keeps_a_forgotten_copy_beside_the_live_one(admin_api):
    item = {"user_id": "u-a", "type": "long_term", "content": "User prefers dark mode"}
    doc = {"schema_version": 2, "user_id": "u-a", "memories": [
        {**item, "memory_id": "mem_00000000000000b1", "deleted_at": "2026-01-01T00:00:00Z"},
        {**item, "memory_id": "mem_00000000000000b2"}]}
    resp = admin_api.post("/import?mode=replace", doc)
    assert resp.status_code == 200 and resp.json()["restored"] == 2
    assert live(user_id="u-a") == ["mem_00000000000000b2"]


def test_rollback_to_a_text_another_live_memory_has_is_refused(admin_api):
    a = create("Standup is at 9:30")
    services.memory_update(memory_id=a.memory_id, content="Standup is at 10:00")
    b = create("Standup is at 9:30")  # a's old text, written again
    resp = admin_api.post(f"/memories/{a.memory_id}/rollback", {"version": 1, "reason": "undo"})
    assert resp.status_code == 409, resp.content
    assert resp.json()["error"]["duplicate_of"] == b.memory_id
    assert b.memory_id in resp.json()["error"]["message"]
    assert Memory.objects.get(pk=a.pk).content == "Standup is at 10:00"
    assert sorted(live()) == sorted([a.memory_id, b.memory_id])


def test_restore_of_a_forgotten_memory_whose_text_was_written_again_is_refused(api):
    a = create("Deploys freeze on Fridays")
    services.memory_forget(memory_id=a.memory_id)
    b = create("Deploys freeze on Fridays")
    assert b.memory_id != a.memory_id
    resp = api.post(f"/memories/{a.memory_id}/restore")
    assert resp.status_code == 409, resp.content
    assert resp.json()["error"]["duplicate_of"] == b.memory_id
    assert live() == [b.memory_id]
    bulk = api.post("/memories/bulk", {"memory_ids": [a.memory_id], "action": "restore"})
    assert bulk.status_code == 409 and live() == [b.memory_id]


def test_restore_in_the_console_says_which_memory_holds_the_text(editor):
    a = create("Deploys freeze on Fridays")
    services.memory_forget(memory_id=a.memory_id)
    b = create("Deploys freeze on Fridays")
    resp = login(editor).post(f"/memories/{a.memory_id}/restore/", {"reason": ""},
                              headers={"HX-Request": "true"})
    assert resp.status_code == 409
    assert b.memory_id in resp.content.decode()
    assert live() == [b.memory_id]


@pytest.mark.parametrize("change", [
    {"content": "Coffee machine is on floor 3"},
    {"content": "Coffee machine is on floor 3  "},   # the same after normalising
    {"type": "long_term"},
])
def test_patch_to_a_live_memorys_text_is_refused(api, change):
    a = create("Coffee machine is on floor 3")
    b = create("Coffee machine is on floor 2" if "content" in change
               else "Coffee machine is on floor 3", type="long_term" if "content" in change
               else "working")
    resp = api.patch(f"/memories/{b.memory_id}", change)
    assert resp.status_code == 409, resp.content
    assert resp.json()["error"]["duplicate_of"] == a.memory_id
    assert Memory.objects.get(pk=b.pk).version == 1
    assert sorted(live()) == sorted([a.memory_id, b.memory_id])


def test_a_patch_keeping_its_own_text_is_no_duplicate(api):
    a = create("Coffee machine is on floor 3")
    create("Coffee machine is on floor 3", conversation_id="c-1")  # another scope
    resp = api.patch(f"/memories/{a.memory_id}", {"content": "Coffee machine is on floor 3",
                                                  "importance": 0.9})
    assert resp.status_code == 200 and resp.json()["importance"] == 0.9
