"""A memory's server-built context (its conversation's neighbouring turns) holds only the
turns of its own agent (``agent_id``; an unscoped memory only unscoped ones): one agent's
write never puts another agent's text in its own context, never rebuilds another agent's
context, and so never makes one agent's memories match the other's words. Every path that
builds the window: a create, a bulk create, a rollback of a server-built context, a purge's
neighbour rebuild (memories.services.context, memories.services.create._window_sql)."""

import datetime as dt

import pytest

from accounts.tokens import token_create
from memories import services
from memories.models import Memory
from tests.conftest import ApiClient

# The PostgreSQL pass runs these (scripts/test -m postgres): the window's raw SQL.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

SECRET = "Alice secret salary is 185000 dollars"


@pytest.fixture
def planner_api(editor):
    client = ApiClient(None)
    client.token = token_create(user=editor, agents=["planner"])
    return client


def turn(api, content, n, agent_id="", conversation="c1", **kw):
    resp = api.post("/memories", {"user_id": "alice", "conversation_id": conversation,
                                  "content": content, "agent_id": agent_id,
                                  "created_at": f"2026-11-20T10:00:{n:02d}+00:00", **kw})
    assert resp.status_code == 201, resp.content
    return resp.json()


def context_of(memory_id):
    return Memory.objects.get(memory_id=memory_id).context


def test_another_agents_turn_is_never_in_a_context_nor_rebuilt_by_its_write(api, planner_api):
    secret = turn(api, SECRET, 1, agent_id="researcher")
    mine = turn(planner_api, "Booked the Lisbon flight for Alice", 2, agent_id="planner")
    assert mine["context"] == "" and mine["context_from"] == "conversation"
    got = planner_api.get(f"/memories/{mine['memory_id']}").json()
    assert got["context"] == ""
    listed = planner_api.get("/memories?user_id=alice").json()["memories"]
    assert [(m["memory_id"], m["context"]) for m in listed] == [(mine["memory_id"], "")]
    # The researcher's memory was not rebuilt with the planner's turn (nor versioned).
    assert context_of(secret["memory_id"]) == ""
    assert api.get(f"/memories/{secret['memory_id']}").json()["version"] == 1
    # Recall of the researcher's words by the planner finds nothing through the context.
    for profile in ("context", "bm25", "stemmed"):
        found = planner_api.post("/recall", {"user_id": "alice", "query": "salary 185000",
                                             "profile": profile})
        assert found.status_code == 200, found.content
        assert found.json()["results"] == [], profile
        own = planner_api.post("/recall", {"user_id": "alice", "query": "Lisbon flight",
                                           "profile": profile}).json()["results"]
        assert [h["memory_id"] for h in own] == [mine["memory_id"]], profile
    # The agents' own turns still neighbour each other, around the other's.
    later = turn(api, "Researcher: her manager approved the trip", 3, agent_id="researcher")
    assert later["context"] == SECRET
    assert context_of(secret["memory_id"]) == later["content"]
    again = turn(planner_api, "Booked the hotel near the station", 4, agent_id="planner")
    assert again["context"] == mine["content"]
    assert context_of(mine["memory_id"]) == again["content"]
    assert context_of(later["memory_id"]) == SECRET  # not rebuilt by the planner's turn


def test_an_unscoped_memory_has_only_unscoped_neighbours(api):
    scoped = turn(api, "Researcher: the budget is tight", 1, agent_id="researcher")
    plain = turn(api, "Alice: I want a window seat", 2)
    assert plain["context"] == ""
    plain2 = turn(api, "Alice: and a vegetarian meal", 3)
    assert plain2["context"] == plain["content"]
    assert context_of(plain["memory_id"]) == plain2["content"]
    assert context_of(scoped["memory_id"]) == ""


def test_a_bulk_create_builds_each_context_from_its_own_agents_turns(builtins):
    def at(n):
        return dt.datetime(2026, 11, 20, 10, 0, n, tzinfo=dt.UTC)

    stored = services.memory_create(user_id="alice", conversation_id="c1", content=SECRET,
                                    agent_id="researcher", created_at=at(1))[0]
    plain = services.memory_create(user_id="alice", conversation_id="c1",
                                   content="Alice: I want a window seat", created_at=at(2))[0]
    out = services.memory_create_many(items=[
        {"user_id": "alice", "conversation_id": "c1", "agent_id": "planner",
         "content": "Booked the Lisbon flight for Alice", "created_at": at(3)},
        {"user_id": "alice", "conversation_id": "c1", "agent_id": "planner",
         "content": "Booked the hotel near the station", "created_at": at(4)},
        {"user_id": "alice", "conversation_id": "c1", "agent_id": "researcher",
         "content": "Researcher: her manager approved the trip", "created_at": at(5)},
    ])
    flight, hotel, approved = (m for m, _ in out)
    assert context_of(flight.memory_id) == hotel.content
    assert context_of(hotel.memory_id) == flight.content
    assert context_of(approved.memory_id) == SECRET
    assert context_of(stored.memory_id) == approved.content
    assert context_of(plain.memory_id) == ""


def test_a_rollback_rebuilds_the_context_from_its_own_agents_turns(admin_api):
    first = turn(admin_api, SECRET, 1, agent_id="researcher")
    turn(admin_api, "Booked the Lisbon flight for Alice", 2, agent_id="planner")
    edited = admin_api.patch(f"/memories/{first['memory_id']}",
                             {"content": "Alice salary is private", "reason": "typo"})
    assert edited.status_code == 200, edited.content
    back = admin_api.post(f"/memories/{first['memory_id']}/rollback",
                          {"version": 1, "reason": "undo"})
    assert back.status_code == 200, back.content
    assert context_of(first["memory_id"]) == ""


def test_a_purge_rebuilds_the_neighbours_from_their_own_agents_turns(admin_api):
    first = turn(admin_api, "Researcher: Alice asked about pay bands", 1, agent_id="researcher")
    turn(admin_api, "Booked the Lisbon flight for Alice", 2, agent_id="planner")
    purged = turn(admin_api, SECRET, 3, agent_id="researcher")
    last = turn(admin_api, "Researcher: her manager approved the trip", 4,
                agent_id="researcher")
    assert context_of(first["memory_id"]) == SECRET
    assert admin_api.delete(f"/memories/{purged['memory_id']}?purge=1").status_code == 204
    assert context_of(first["memory_id"]) == last["content"]
    assert context_of(last["memory_id"]) == first["content"]
