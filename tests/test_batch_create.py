"""``POST /memories/batch``: many single creates in one request, each with its own result."""

import json

import pytest

from accounts.tokens import token_create
from memories.models import Memory
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


def batch(api, items, key=None):
    headers = {"Authorization": f"Bearer {api.token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return api.client.post("/api/v1/memories/batch", data=json.dumps({"memories": items}),
                           content_type="application/json", headers=headers)


def test_it_creates_each_item_and_reports_each_result(api):
    resp = batch(api, [
        {"user_id": "b1", "content": "the office is in Porto", "tags": ["place"]},
        {"user_id": "b1", "content": "x", "type": "forever"},
        {"user_id": "b1", "content": "the office is in Porto"},
        {"user_id": "b1", "content": "tea at four", "colour": "red"},
        "not an object",
        {"user_id": "b1", "content": "lunch at noon", "conversation_id": "c1"},
    ])
    assert resp.status_code == 201, resp.content
    results = resp.json()["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4, 5]
    assert [r["status"] for r in results] == ["created", "error", "deduplicated", "error",
                                              "error", "created"]
    assert results[2]["memory_id"] == results[0]["memory_id"]
    assert results[1]["error"]["field"] == "type" and results[1]["error"]["code"] == "invalid"
    assert results[3]["error"]["message"] == "unknown field 'colour'"
    assert "memory_id" not in results[1] and "error" not in results[0]
    stored = Memory.objects.get(memory_id=results[0]["memory_id"])
    assert stored.tags == ["place"] and stored.user_id == "b1"
    assert Memory.objects.filter(user_id="b1").count() == 2
    found = api.post("/recall", {"user_id": "b1", "query": "office Porto"}).json()["results"]
    assert [h["memory_id"] for h in found] == [results[0]["memory_id"]]


def test_a_service_error_is_the_items_own(api):
    """Validation the service does (content too long, an unknown superseded id) fails the
    item alone; a supersession names the older memory as a single create does."""
    older = api.post("/memories", {"user_id": "b2", "content": "I live in Porto"}).json()
    resp = batch(api, [
        {"user_id": "b2", "content": "y" * 70_000},
        {"user_id": "b2", "content": "I live in Lisbon", "supersedes": [older["memory_id"]]},
        {"user_id": "b2", "content": "z", "supersedes": ["mem_0000000000000000"]},
        {"user_id": "b2", "content": "q", "created_at": "yesterday"},
    ])
    results = resp.json()["results"]
    assert [r["status"] for r in results] == ["error", "created", "error", "error"]
    assert results[0]["error"]["code"] in ("too_large", "invalid")
    assert results[0]["error"]["field"] == "content"
    assert results[2]["error"]["code"] == "not_found"
    assert results[3]["error"]["field"] == "created_at"
    again = api.get(f"/memories/{older['memory_id']}").json()
    assert again["superseded_by"] == results[1]["memory_id"]


def test_it_refuses_viewers_empty_and_over_500(api, viewer_api):
    assert batch(viewer_api, [{"user_id": "b3", "content": "a"}]).status_code == 403
    empty = batch(api, [])
    assert empty.status_code == 400 and empty.json()["error"]["field"] == "memories"
    over = batch(api, [{"user_id": "b3", "content": f"m {n}"} for n in range(501)])
    assert over.status_code == 413 and over.json()["error"]["field"] == "memories"
    assert not Memory.objects.filter(user_id="b3").exists()
    full = batch(api, [{"user_id": "b3", "content": f"m {n}"} for n in range(500)])
    assert full.status_code == 201
    assert {r["status"] for r in full.json()["results"]} == {"created"}
    assert Memory.objects.filter(user_id="b3").count() == 500


def test_a_restricted_token_writes_only_its_namespaces(editor):
    client = ApiClient(None)
    client.token = token_create(user=editor, namespaces=["mine"])
    resp = batch(client, [{"user_id": "mine", "content": "a"},
                          {"user_id": "theirs", "content": "b"}])
    results = resp.json()["results"]
    assert [r["status"] for r in results] == ["created", "error"]
    assert results[1]["error"]["code"] == "forbidden"
    assert results[1]["error"]["field"] == "user_id"
    assert not Memory.objects.filter(user_id="theirs").exists()


def test_infer_is_refused_per_item(api):
    resp = batch(api, [{"user_id": "b4", "content": "Ana: I moved to Lisbon", "infer": True}])
    (result,) = resp.json()["results"]
    assert result["status"] == "error" and result["error"]["field"] == "infer"


def test_an_idempotency_key_replays_the_first_answer(api):
    items = [{"user_id": "b5", "content": "first"}, {"user_id": "b5", "content": "second"}]
    first = batch(api, items, key="retry-1")
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    again = batch(api, items, key="retry-1")
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()  # "created" both times, not "deduplicated"
    assert Memory.objects.filter(user_id="b5").count() == 2
    other = batch(api, [{"user_id": "b5", "content": "third"}], key="retry-1")
    assert other.status_code == 409 and other.json()["error"]["field"] == "Idempotency-Key"
    bad = batch(api, items, key="é")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "Idempotency-Key"
    without = batch(api, items)
    assert [r["status"] for r in without.json()["results"]] == ["deduplicated"] * 2


def test_keys_are_per_user(api, admin_api):
    items = [{"user_id": "b6", "content": "shared key"}]
    assert batch(api, items, key="k").json()["results"][0]["status"] == "created"
    other = batch(admin_api, items, key="k").json()["results"][0]
    assert other["status"] == "deduplicated"
