"""Ids are any 1-128 characters (DESIGN.md), ``/`` included: every route that takes one, in
its path or its query, reaches the object, whether the client sends ``/`` or ``%2F``. Ids of
kinds that never hold ``/`` (memory ids, profile names, job ids) answer a JSON 404 for one,
never an HTML page or a 500. An over-long recall query names the field ``query``."""

from urllib.parse import quote

import pytest

from memories.models import Memory
from sessions.models import Message, Session
from tests.conftest import login
from tests.helpers import create

pytestmark = pytest.mark.django_db

# Ids ending in a sub-route ("x/context", "x/messages") are shadowed by that route: the
# one shape the path cannot tell apart (docs/agent-developer.md, "Conventions").
ODD_IDS = ["team/a/b", "a//b", "x/", "/lead", "客服/1", "a b/c d", "50%/off", "q?x=1#frag",
           "..", "a\\b", "context/x", "messages"]


def enc(value: str, slash: bool) -> str:
    """Percent-encode an id for a path: ``slash`` keeps "/" as it is, else it goes as %2F."""
    return quote(value, safe="/" if slash else "")


@pytest.mark.parametrize("slash", [True, False], ids=["raw-slash", "encoded-slash"])
@pytest.mark.parametrize("session_id", ODD_IDS)
def test_every_session_route_takes_any_id(api, admin_api, session_id, slash):
    resp = api.post("/sessions", {"user_id": "team/u", "session_id": session_id})
    assert resp.status_code == 201, resp.content
    path = "/sessions/" + enc(session_id, slash)
    got = api.get(path)
    assert got.status_code == 200, got.content
    assert got.json()["session_id"] == session_id
    appended = api.post(path + "/messages", {"role": "user", "content": "remember the tea"})
    assert appended.status_code == 201, appended.content
    assert appended.json()["length"] == 1
    context = api.get(path + "/context?last=5")
    assert context.status_code == 200, context.content
    assert [m["content"] for m in context.json()["messages"]] == ["remember the tea"]
    promoted = api.post(path + "/messages/1/promote")
    assert promoted.status_code == 201, promoted.content
    listed = api.get("/sessions?user_id=" + quote("team/u", safe=""))
    assert listed.status_code == 200
    assert [s["session_id"] for s in listed.json()["sessions"]] == [session_id]
    assert api.call("delete", path).status_code == 204
    assert not Session.objects.filter(session_id=session_id).exists()
    assert not Message.objects.exists()


@pytest.mark.parametrize("session_id", ["team/a/b", "warm/x", "客服/1", "50%/off"])
def test_every_console_session_route_takes_any_id(editor, api, session_id):
    assert api.post("/sessions", {"user_id": "team/u", "session_id": session_id}).status_code == 201
    api.post("/sessions/" + enc(session_id, True) + "/messages",
             {"role": "user", "content": "a message to promote"})
    client = login(editor)
    base = "/sessions/" + enc(session_id, True) + "/"
    page = client.get(base)
    assert page.status_code == 200 and session_id in page.content.decode()
    assert client.post(base + "warm/").status_code in (200, 302)
    assert client.post(base + "messages/1/promote/").status_code in (200, 302)
    assert Memory.objects.filter(content="a message to promote").exists()
    listed = client.get("/sessions/?user_id=" + quote("team/u", safe=""))
    assert listed.status_code == 200 and session_id in listed.content.decode()


@pytest.mark.parametrize("user_id", ["team/a", "a/b/c", "50%/x", "客服/1"])
def test_user_ids_with_a_slash_work_in_every_query_and_body(admin_api, admin_user, user_id):
    memory = create("the tea is in the cupboard", user_id=user_id)
    q = quote(user_id, safe="")
    found = admin_api.post("/recall", {"user_id": user_id, "query": "tea"}).json()["results"]
    assert [r["memory_id"] for r in found] == [memory.memory_id]
    doc = admin_api.get(f"/export?user_id={q}")
    assert doc.status_code == 200 and len(doc.json()["memories"]) == 1
    assert admin_api.post("/import?mode=replace", doc.json()).status_code == 200
    assert admin_api.post("/reindex", {"user_id": user_id}).status_code == 202
    assert admin_api.post("/cleanup", {"user_id": user_id, "dry_run": True}).status_code == 200
    assert admin_api.get(f"/memories/{memory.memory_id}").json()["user_id"] == user_id
    client = login(admin_user)
    listed = client.get(f"/memories/?user_id={q}")
    assert listed.status_code == 200 and memory.memory_id in listed.content.decode()
    searched = client.get(f"/search/?user_id={q}&q=tea")
    assert searched.status_code == 200 and memory.memory_id in searched.content.decode()
    exported = client.get(f"/index/backup/export/?user_id={q}")
    assert exported.status_code == 200 and memory.memory_id in exported.content.decode()


@pytest.mark.parametrize("path", [
    "/memories/mem_0123456789abcdef/x", "/memories/a/b", "/memories/a/b/history",
    "/memories/a%2Fb", "/profiles/a/b", "/profiles/a%2Fb", "/profiles/a/b/history",
    "/jobs/a/b", "/jobs/a%2Fb", "/query-sets/1/2", "/runs/a/b",
])
def test_ids_that_never_hold_a_slash_answer_a_json_404(admin_api, path):
    resp = admin_api.get(path)
    assert resp.status_code == 404, resp.content[:200]
    assert resp.json()["error"]["code"] == "not_found"


def test_an_over_long_recall_query_names_the_field_query(api):
    resp = api.post("/recall", {"user_id": "u-a", "query": "tea " * 2000})
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == "query"
    assert "query" in resp.json()["error"]["message"]
