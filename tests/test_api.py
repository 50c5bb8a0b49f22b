"""The JSON API contract of DESIGN.md: shapes, status codes and error bodies."""

import pytest

from memories.models import Memory

pytestmark = pytest.mark.django_db


def remember(api, content="use argon2 for password hashing", **kw):
    resp = api.post("/memories", {"user_id": "u-a", "content": content, **kw})
    assert resp.status_code == 201, resp.content
    return resp.json()


def error_of(resp):
    body = resp.json()
    assert set(body["error"]) >= {"code", "message", "field"}
    return body["error"]


def test_it_creates_and_dedups(api):
    body = remember(api, importance=0.4, tags=["auth"], metadata={"k": [1, 2]})
    assert body["memory_id"].startswith("mem_") and body["version"] == 1
    assert body["importance"] == 0.4 and body["metadata"] == {"k": [1, 2]}
    again = api.post("/memories", {"user_id": "u-a", "content": "use argon2 for password hashing"})
    assert again.status_code == 200 and again.json()["deduplicated"] is True
    assert again.json()["memory_id"] == body["memory_id"]


def test_it_estimates_importance_when_absent(api):
    body = remember(api, content="Important: the deadline is 2026-12-01")
    assert 0.5 < body["importance"] <= 1.0


def test_it_takes_created_at_for_imports(api):
    body = remember(api, created_at="2026-01-15T10:30:00")
    assert body["created_at"].startswith("2026-01-15T10:30:00")
    bad = api.post("/memories", {"user_id": "u-a", "content": "x", "created_at": "yesterday"})
    assert bad.status_code == 400 and error_of(bad)["field"] == "created_at"


def test_it_gets_patches_forgets_and_restores(api):
    memory_id = remember(api)["memory_id"]
    assert api.get(f"/memories/{memory_id}").json()["content"].startswith("use argon2")
    patched = api.patch(f"/memories/{memory_id}", {"importance": 0.9, "reason": "key fact",
                                                  "version": 1})
    assert patched.status_code == 200 and patched.json()["version"] == 2
    stale = api.patch(f"/memories/{memory_id}", {"content": "other", "version": 1})
    assert stale.status_code == 409 and error_of(stale)["current_version"] == 2
    assert api.delete(f"/memories/{memory_id}?reason=obsolete").status_code == 204
    assert api.get(f"/memories/{memory_id}").json()["deleted_at"] is not None
    recall = api.post("/recall", {"user_id": "u-a", "query": "argon2"}).json()
    assert recall["results"] == []
    restored = api.post(f"/memories/{memory_id}/restore", {"reason": "still true"})
    assert restored.status_code == 200 and restored.json()["deleted_at"] is None
    history = api.get(f"/memories/{memory_id}/history").json()["versions"]
    assert [v["kind"] for v in history] == ["create", "importance", "forget", "restore"]
    assert [v["version"] for v in history] == [1, 2, 3, 4]
    assert history[1]["reason"] == "key fact" and history[1]["changed_by"] == "eddie"
    assert set(history[0]) >= {"version", "kind", "content", "importance", "tags", "type",
                               "changed_by", "reason", "at"}


def test_it_recalls_with_explain(api):
    memory_id = remember(api, metadata={"src": "wiki"})["memory_id"]
    remember(api, content="password reset links expire in 30 minutes")
    body = api.post("/recall", {"user_id": "u-a", "query": "argon2 password", "limit": 1,
                                "profile": "bm25"}).json()
    assert set(body) >= {"results", "match_mode_used", "profile", "took_ms"}
    (hit,) = body["results"]
    assert hit["memory_id"] == memory_id and hit["metadata"] == {"src": "wiki"}
    assert set(hit) >= {"memory_id", "content", "type", "version", "score", "metadata",
                        "created_at", "importance", "explain"}
    assert set(hit["explain"]) >= {"bm25", "relevance", "recency", "importance", "terms"}
    assert hit["score"] == pytest.approx(sum(hit["explain"]["terms"].values()))
    assert body["profile"] == "bm25" and body["match_mode_used"] == "any"


def test_it_bumps_access_counts_on_recall(api):
    memory_id = remember(api)["memory_id"]
    api.post("/recall", {"user_id": "u-a", "query": "argon2"})
    api.post("/recall", {"user_id": "u-a", "query": "argon2"})
    body = api.get(f"/memories/{memory_id}").json()  # folds the pending hits first
    assert body["access_count"] == 2 and body["version"] == 1
    row = Memory.objects.get(pk=memory_id)
    assert row.access_count == 2 and row.accessed_at is not None
    assert row.history.count() == 1


def test_it_answers_an_empty_namespace_with_200(api):
    """Public case B09 (a)."""
    resp = api.post("/recall", {"user_id": "u-new", "query": "hello"})
    assert resp.status_code == 200 and resp.json()["results"] == []


def test_it_analyzes(api):
    body = api.post("/analyze", {"text": "请问VIP会员怎么续费？"}).json()
    assert "vip" in body["tokens"] and "续费" in body["tokens"] and "？" not in body["tokens"]
    stemmed = api.post("/analyze", {"text": "running deployments", "profile": "stemmed"}).json()
    assert stemmed["tokens"] == ["run", "deploy"]
    plain = api.post("/analyze", {"text": "running deployments", "profile": "bm25"}).json()
    assert plain["tokens"] == ["running", "deployments"]


def test_it_reports_readiness(api):
    memory_id = remember(api)["memory_id"]
    body = api.get(f"/memories/{memory_id}/ready").json()
    assert body["ready"] is True and body["indexed_at"] > 0


@pytest.mark.parametrize("body,field,status", [
    ({"user_id": "u-a"}, "content", 400),
    ({"user_id": "u-a", "content": "   "}, "content", 400),
    ({"user_id": " u-a", "content": "x"}, "user_id", 400),
    ({"user_id": "u-a", "content": "x", "importance": 2}, "importance", 400),
    ({"user_id": "u-a", "content": "x", "colour": "red"}, "colour", 400),
    ({"user_id": "u-a", "content": "x", "type": "forever"}, "type", 400),
    ({"user_id": "u-a", "content": "x", "metadata": [1]}, "metadata", 400),
    ({"user_id": "u-a", "content": "x" * 70000}, "content", 413),
])
def test_it_rejects_bad_memories_naming_the_field(api, body, field, status):
    resp = api.post("/memories", body)
    assert resp.status_code == status, resp.content
    assert error_of(resp)["field"] == field
    assert Memory.objects.count() == 0


def test_it_rejects_nan_and_malformed_json(api):
    nan = api.post("/memories", '{"user_id": "u-a", "content": "x", "importance": NaN}')
    assert nan.status_code == 400 and error_of(nan)["field"] == "importance"
    broken = api.post("/memories", '{"user_id": ')
    assert broken.status_code == 400 and error_of(broken)["code"] == "invalid"


@pytest.mark.parametrize("body,field", [
    ({"user_id": "u-a", "query": "x", "limit": 0}, "limit"),
    ({"user_id": "u-a", "query": "x", "limit": 101}, "limit"),
    ({"user_id": "u-a", "query": "x", "match_mode": "some"}, "match_mode"),
    ({"user_id": "u-a", "query": "x", "types": ["eternal"]}, "types"),
    ({"query": "x"}, "user_id"),
])
def test_it_rejects_bad_recalls(api, body, field):
    resp = api.post("/recall", body)
    assert resp.status_code == 400 and error_of(resp)["field"] == field


def test_it_answers_404_for_unknown_ids_in_any_format(api):
    for memory_id in ["mem_0000000000000000", "nope", "mem_ZZ", "%2e%2e"]:
        resp = api.get(f"/memories/{memory_id}")
        assert resp.status_code == 404 and error_of(resp)["code"] == "not_found"
    resp = api.post("/recall", {"user_id": "u-a", "query": "x", "profile": "nope"})
    assert resp.status_code == 404 and error_of(resp)["field"] == "profile"


def test_it_requires_a_token(builtins):
    from tests.conftest import ApiClient
    anonymous = ApiClient(None)
    resp = anonymous.post("/recall", {"user_id": "u-a", "query": "x"})
    assert resp.status_code == 401 and error_of(resp)["code"] == "unauthorized"
    anonymous.token = "mc_not-a-real-token"
    assert anonymous.post("/recall", {"user_id": "u-a", "query": "x"}).status_code == 401


def test_it_enforces_roles(viewer_api, api, admin_api):
    denied = viewer_api.post("/memories", {"user_id": "u-a", "content": "x"})
    assert denied.status_code == 403 and "editor" in error_of(denied)["message"]
    assert Memory.objects.count() == 0
    memory_id = remember(api)["memory_id"]
    api.patch(f"/memories/{memory_id}", {"content": "use scrypt"})
    rollback = {"version": 1, "reason": "wrong edit"}
    assert api.post(f"/memories/{memory_id}/rollback", rollback).status_code == 403
    assert api.delete(f"/memories/{memory_id}?purge=1").status_code == 403
    done = admin_api.post(f"/memories/{memory_id}/rollback", rollback)
    assert done.status_code == 200 and done.json()["content"].startswith("use argon2")
    assert done.json()["version"] == 3
    assert admin_api.delete(f"/memories/{memory_id}?purge=1").status_code == 204
    assert api.get(f"/memories/{memory_id}").status_code == 404


def test_it_serves_the_openapi_document(api):
    resp = api.client.get("/api/v1/openapi.json")
    assert resp.status_code == 200
    paths = resp.json()["paths"]
    assert "/api/v1/recall" in paths and "/api/v1/memories/{memory_id}/history" in paths


def test_it_answers_json_for_unknown_paths_and_methods(api):
    resp = api.call("put", "/memories")
    assert resp.status_code == 405 and error_of(resp)["code"] == "method_not_allowed"
    resp = api.get("/no/such/thing")
    assert resp.status_code == 404 and error_of(resp)["code"] == "not_found"
