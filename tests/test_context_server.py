"""Context built by the server on every write path (memories.services.context,
sessions.promote), through the HTTP API: conversation turns, promoted session messages, the
next turn arriving, PATCH, rollback, promote, and recall seeing it (explain names the
context terms)."""

import pytest

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

T0 = "2026-11-20T10:00:00+00:00"


@pytest.fixture
def api_admin(admin_user):
    return ApiClient(admin_user)


def turn(api, content, n, conversation="c-1", **kw):
    resp = api.post("/memories", {"user_id": "u-a", "conversation_id": conversation,
                                  "content": content,
                                  "created_at": f"2026-11-20T10:00:{n:02d}+00:00", **kw})
    assert resp.status_code == 201, resp.content
    return resp.json()


def get(api, memory_id):
    return api.get(f"/memories/{memory_id}").json()


def recall(api, query, limit=5):
    resp = api.post("/recall", {"user_id": "u-a", "query": query, "limit": limit})
    assert resp.status_code == 200
    return resp.json()["results"]


def test_a_turn_gets_the_previous_turns_and_then_the_next(api):
    a = turn(api, "Calvin: my studio flooded last night", 1)
    assert a["context"] == "" and a["context_from"] == "conversation"
    b = turn(api, "Dave: oh no, was the mixing desk damaged?", 2)
    assert b["context"] == "Calvin: my studio flooded last night"
    # The previous turn gained the next one before b's write returned.
    assert get(api, a["memory_id"])["context"] == "Dave: oh no, was the mixing desk damaged?"
    c = turn(api, "Calvin: the desk is fine, the carpet is ruined", 3)
    d = turn(api, "Dave: glad the gear survived", 4)
    assert get(api, c["memory_id"])["context"] == (
        "Calvin: my studio flooded last night\n"
        "Dave: oh no, was the mixing desk damaged?\n"
        "Dave: glad the gear survived")
    # Only two previous turns and one next one.
    assert get(api, d["memory_id"])["context"] == (
        "Dave: oh no, was the mixing desk damaged?\n"
        "Calvin: the desk is fine, the carpet is ruined")


def test_the_next_turn_is_searchable_in_the_previous_memory_at_once(api):
    a = turn(api, "Calvin: my studio flooded last night", 1)
    turn(api, "Dave: was the mixing desk damaged?", 2)
    hits = recall(api, "mixing desk")
    by_id = {h["memory_id"]: h for h in hits}
    assert a["memory_id"] in by_id
    assert "desk" in by_id[a["memory_id"]]["explain"]["context_terms"]


def test_the_rebuild_writes_no_version(api):
    a = turn(api, "Calvin: my studio flooded", 1)
    turn(api, "Dave: the desk?", 2)
    after = get(api, a["memory_id"])
    assert after["version"] == 1
    assert len(api.get(f"/memories/{a['memory_id']}/history").json()["versions"]) == 1
    # The client's optimistic lock still holds.
    assert api.patch(f"/memories/{a['memory_id']}", {"importance": 0.9, "version": 1}
                     ).status_code == 200


def test_a_given_context_is_the_clients_and_never_rebuilt(api):
    a = turn(api, "Calvin: my studio flooded", 1, context="a storm over Boston")
    assert a["context_from"] == "client"
    turn(api, "Dave: the desk?", 2)
    assert get(api, a["memory_id"])["context"] == "a storm over Boston"


def test_other_conversations_and_memories_without_one_are_not_neighbours(api):
    a = turn(api, "Calvin: my studio flooded", 1)
    turn(api, "Dave: other chat", 2, conversation="c-2")
    lone = api.post("/memories", {"user_id": "u-a", "content": "no conversation"}).json()
    assert get(api, a["memory_id"])["context"] == ""
    assert lone["context"] == "" and lone["context_from"] == ""


def test_patch_sets_context_as_a_new_version(api):
    a = turn(api, "Calvin: my studio flooded", 1)
    patched = api.patch(f"/memories/{a['memory_id']}", {"context": "storm; insurance claim",
                                                        "reason": "add what it was about"})
    assert patched.status_code == 200
    body = patched.json()
    assert body["version"] == 2 and body["context"] == "storm; insurance claim"
    assert body["context_from"] == "client"
    turn(api, "Dave: the desk?", 2)
    assert get(api, a["memory_id"])["context"] == "storm; insurance claim"
    assert recall(api, "insurance")[0]["memory_id"] == a["memory_id"]
    bad = api.patch(f"/memories/{a['memory_id']}", {"context": 5})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "context"


def test_rollback_restores_the_context_of_the_version(api_admin):
    api = api_admin
    a = turn(api, "Calvin: my studio flooded", 1, context="first words")
    api.patch(f"/memories/{a['memory_id']}", {"context": "second words"})
    back = api.post(f"/memories/{a['memory_id']}/rollback", {"version": 1, "reason": "undo"})
    assert back.status_code == 200, back.content
    assert back.json()["context"] == "first words" and back.json()["version"] == 3
    assert recall(api, "first")[0]["memory_id"] == a["memory_id"]
    assert recall(api, "second") == []


def test_rollback_of_a_server_built_context_follows_the_conversation(api_admin):
    api = api_admin
    a = turn(api, "Calvin: my studio flooded", 1)
    api.patch(f"/memories/{a['memory_id']}", {"content": "Calvin: my studio flooded badly"})
    turn(api, "Dave: the desk?", 2)
    back = api.post(f"/memories/{a['memory_id']}/rollback", {"version": 1, "reason": "undo"})
    assert back.json()["content"] == "Calvin: my studio flooded"
    assert back.json()["context"] == "Dave: the desk?"
    assert back.json()["context_from"] == "conversation"


def test_promote_copies_the_context(api):
    w = turn(api, "Calvin: keep the receipts", 1, type="working")
    turn(api, "Dave: for the insurance claim?", 2, type="working")
    promoted = api.post(f"/memories/{w['memory_id']}/promote", {})
    assert promoted.status_code == 201
    body = promoted.json()
    assert body["context"] == "Dave: for the insurance claim?"
    assert body["context_from"] == "copy" and body["conversation_id"] is None


def session_with(api, *contents):
    sid = api.post("/sessions", {"user_id": "u-a"}).json()["session_id"]
    msgs = [{"role": "user", "content": c, "at": f"2026-11-2{n}T09:00:00+00:00"}
            for n, c in enumerate(contents)]
    assert api.post(f"/sessions/{sid}/messages", {"messages": msgs}).status_code == 201
    return sid


def test_a_promoted_message_gets_the_previous_messages_and_then_the_next(api):
    sid = session_with(api, "we moved to Lisbon", "the flat has a balcony", "rent is high")
    promoted = api.post(f"/sessions/{sid}/messages/3/promote", {})
    assert promoted.status_code == 201
    body = promoted.json()
    assert body["context"] == "we moved to Lisbon\nthe flat has a balcony"
    assert body["context_from"] == "session"
    assert body["created_at"].startswith("2026-11-22T09:00:00")  # the message's time
    assert api.post(f"/sessions/{sid}/messages", {"role": "assistant",
                                                  "content": "try the Alfama district"}
                    ).status_code == 201
    after = get(api, body["memory_id"])
    assert after["context"].endswith("try the Alfama district") and after["version"] == 1
    hit = recall(api, "Alfama")
    assert [h["memory_id"] for h in hit] == [body["memory_id"]]
    assert hit[0]["explain"]["context_terms"] == ["alfama"]


def test_an_earlier_promoted_message_does_not_gain_later_messages(api):
    sid = session_with(api, "one", "two")
    first = api.post(f"/sessions/{sid}/messages/1/promote", {}).json()
    assert first["context"] == "two"
    api.post(f"/sessions/{sid}/messages", {"role": "user", "content": "three"})
    assert get(api, first["memory_id"])["context"] == "two"


def test_a_message_at_that_is_not_a_date_is_a_400_and_writes_nothing(api):
    sid = api.post("/sessions", {"user_id": "u-a"}).json()["session_id"]
    bad = api.post(f"/sessions/{sid}/messages",
                   {"messages": [{"role": "user", "content": "hi", "at": "soon"}]})
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "messages[0].at"
    assert api.get(f"/sessions/{sid}").json()["total"] == 0
