"""The agent scope: ``agent_id`` and ``run_id`` set on create (checked as identifiers, never
changed after), mirrored into the hot store the same whether written or rebuilt, and tokens
restricted to agents (REST, MCP, the console's token form and ``create_api_token``)."""

import io

import anyio
import pytest
from django.core.management import call_command

from accounts.models import ApiToken
from accounts.tokens import token_create
from memories import store
from memories.models import Memory
from operations import reindex
from tests.conftest import ApiClient, work
from tests.helpers import create, memory_hash
from tests.test_mcp import http_client

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_sets_the_agent_scope_on_create_and_keeps_it(api):
    resp = api.post("/memories", {"user_id": "u-a", "content": "Book the Lisbon flight",
                                  "agent_id": "planner", "run_id": "run-7"})
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert (body["agent_id"], body["run_id"]) == ("planner", "run-7")
    got = api.get(f"/memories/{body['memory_id']}").json()
    assert (got["agent_id"], got["run_id"]) == ("planner", "run-7")
    patched = api.patch(f"/memories/{body['memory_id']}", {"agent_id": "other"})
    assert patched.status_code == 400
    assert patched.json()["error"]["field"] == "agent_id"
    assert Memory.objects.get().agent_id == "planner"


@pytest.mark.parametrize(("field", "value"), [("agent_id", " planner"), ("agent_id", "x" * 129),
                                              ("run_id", "a\tb"), ("agent_id", 7)])
def test_a_bad_agent_scope_is_a_400_naming_the_field(api, field, value):
    resp = api.post("/memories", {"user_id": "u-a", "content": "some fact", field: value})
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == field
    assert not Memory.objects.exists()


def test_the_same_text_of_two_agents_is_two_memories(builtins):
    a = create("The deploy window is Friday", agent_id="planner")
    b = create("The deploy window is Friday", agent_id="reviewer")
    again = create("The deploy window is Friday", agent_id="planner")
    assert a.memory_id != b.memory_id and again.memory_id == a.memory_id


def test_the_hash_holds_the_scope_the_same_written_or_rebuilt(builtins, redis_client):
    m = create("Planner chose the hotel", agent_id="planner", run_id="r2")
    written = memory_hash("u-a", m.memory_id)
    assert (written["agent_id"], written["run_id"]) == ("planner", "r2")
    for key in list(redis_client.scan_iter(match=store.key("u-a", "") + "*")):
        redis_client.delete(key)
    reindex.reindex_all()
    rebuilt = memory_hash("u-a", m.memory_id)
    assert {k: v for k, v in rebuilt.items() if k != "indexed_at"} == {
        k: v for k, v in written.items() if k != "indexed_at"}


@pytest.fixture
def planner_api(editor):
    client = ApiClient(None)
    client.token = token_create(user=editor, agents=["planner"])
    return client


def test_a_token_restricted_to_agents_writes_only_as_them(planner_api):
    missing = planner_api.post("/memories", {"user_id": "u-a", "content": "a fact"})
    other = planner_api.post("/memories", {"user_id": "u-a", "content": "a fact",
                                           "agent_id": "reviewer"})
    batch = planner_api.post("/memories/batch", {"memories": [
        {"user_id": "u-a", "content": "a fact", "agent_id": "reviewer"}]})
    for resp in (missing, other):
        assert resp.status_code == 403
        assert resp.json()["error"]["field"] == "agent_id"
    assert batch.json()["results"][0]["error"]["field"] == "agent_id"
    assert not Memory.objects.exists()
    own = planner_api.post("/memories", {"user_id": "u-a", "content": "a fact",
                                         "agent_id": "planner"})
    assert own.status_code == 201


def test_a_token_restricted_to_agents_reads_only_theirs(planner_api, builtins):
    mine = create("Planner booked the flight", agent_id="planner")
    theirs = create("Reviewer checked the flight", agent_id="reviewer")
    nobody = create("The flight leaves at nine")
    work()
    listed = planner_api.get("/memories?user_id=u-a").json()["memories"]
    assert [m["memory_id"] for m in listed] == [mine.memory_id]
    found = planner_api.post("/recall", {"user_id": "u-a", "query": "flight"}).json()
    assert [h["memory_id"] for h in found["results"]] == [mine.memory_id]
    for memory in (theirs, nobody):
        assert planner_api.get(f"/memories/{memory.memory_id}").status_code == 404
        assert planner_api.patch(f"/memories/{memory.memory_id}",
                                 {"importance": 0.9}).status_code == 404
    asked = planner_api.post("/recall", {"user_id": "u-a", "query": "flight",
                                         "agent_id": "reviewer"})
    assert asked.status_code == 403 and asked.json()["error"]["field"] == "agent_id"
    assert planner_api.get("/memories?user_id=u-a&agent_id=reviewer").status_code == 403
    counted = planner_api.get("/namespaces?user_id=u-a").json()["namespaces"]
    assert [(n["user_id"], n["memories"]) for n in counted] == [("u-a", 1)]


def test_mcp_takes_the_agent_scope_and_the_token_restriction(live_server, editor):
    token = token_create(user=editor, agents=["planner"])

    async def steps(client):
        refused = await client.call_tool("add_memory", {"user_id": "u-a", "content": "x y"})
        added = await client.call_tool("add_memory", {
            "user_id": "u-a", "content": "Planner picked the museum", "agent_id": "planner",
            "run_id": "r1"})
        listed = await client.call_tool("list_memories", {"user_id": "u-a"})
        return refused, added, listed

    async def main():
        async with http_client(live_server, token) as client:
            return await steps(client)

    create("Reviewer picked the museum", agent_id="reviewer")
    refused, added, listed = anyio.run(main)
    assert refused.is_error and refused.structured_content["error"]["field"] == "agent_id"
    assert (added.structured_content["agent_id"], added.structured_content["run_id"]) == (
        "planner", "r1")
    assert [m["agent_id"] for m in listed.structured_content["memories"]] == ["planner"]


def test_the_token_form_sets_and_shows_the_agents(admin_role_client):
    resp = admin_role_client.post("/tokens/new/", {"username": "bot", "role": "editor",
                                                   "agents": "planner, reviewer, planner"})
    assert resp.status_code == 302
    shown = admin_role_client.get(resp["Location"]).content.decode()
    assert 'id="token-agents"' in shown and "<code>reviewer</code>" in shown
    assert ApiToken.objects.get(user__username="bot").agents == ["planner", "reviewer"]
    page = admin_role_client.get("/tokens/").content.decode()
    assert "agents planner, reviewer" in page
    bad = admin_role_client.post("/tokens/new/", {"username": "bot2", "role": "editor",
                                                  "agents": "ok, \u0007bell"})
    assert bad.status_code == 400 and 'id="agents-error"' in bad.content.decode()
    assert not ApiToken.objects.filter(user__username="bot2").exists()


def test_create_api_token_restricts_to_agents(builtins):
    call_command("create_api_token", "bot", "--role", "editor", "--agent", "planner",
                 stdout=io.StringIO())
    assert ApiToken.objects.get().agents == ["planner"]


def test_export_and_import_keep_the_agent_scope_and_webhooks_carry_it(builtins):
    from integrations.webhooks.events import memory_data
    from operations.backup import export_memories, import_memories

    m = create("Planner booked the flight", agent_id="planner", run_id="r1")
    doc = export_memories(user_id="u-a")
    assert (doc["memories"][0]["agent_id"], doc["memories"][0]["run_id"]) == ("planner", "r1")
    import_memories(doc=doc, mode="replace")
    restored = Memory.objects.get(memory_id=m.memory_id)
    assert (restored.agent_id, restored.run_id) == ("planner", "r1")
    doc["user_id"] = None
    doc["memories"][0].update(user_id="u-b", memory_id=None, agent_id=" bad")
    with pytest.raises(Exception, match="agent_id"):
        import_memories(doc=doc, mode="merge")
    assert memory_data(restored)["memory"]["agent_id"] == "planner"


def test_a_session_gives_its_agent_scope_to_the_memories_promoted_from_it(api, planner_api):
    made = api.post("/sessions", {"user_id": "u-a", "session_id": "s1", "agent_id": "planner",
                                  "run_id": "r9"})
    assert (made.status_code, made.json()["run_id"]) == (201, "r9")
    api.post("/sessions/s1/messages", {"role": "user", "content": "I moved to Lisbon"})
    promoted = api.post("/sessions/s1/messages/1/promote", {})
    assert (promoted.json()["agent_id"], promoted.json()["run_id"]) == ("planner", "r9")
    api.post("/sessions", {"user_id": "u-a", "session_id": "s2", "agent_id": "reviewer"})
    assert planner_api.get("/sessions/s2").status_code == 404
    listed = planner_api.get("/sessions?user_id=u-a").json()["sessions"]
    assert [s["session_id"] for s in listed] == ["s1"]
    refused = planner_api.post("/sessions", {"user_id": "u-a", "agent_id": "reviewer"})
    assert (refused.status_code, refused.json()["error"]["field"]) == (403, "agent_id")


def test_the_console_shows_filters_and_writes_the_agent_scope(editor_client):
    from tests.views.conftest import attr_values, text

    mine = create("Planner booked the flight", agent_id="planner", run_id="r1")
    create("Reviewer checked the flight", agent_id="reviewer")
    page = text(editor_client.get("/memories/?user_id=u-a&agent_id=planner"))
    assert attr_values(page, "data-memory-id") == [mine.memory_id]
    assert "run r1" in page and 'name="agent_id"' in page
    bad = editor_client.get("/memories/?agent_id=%20x")
    assert bad.status_code == 400
    made = editor_client.post("/memories/new/", {
        "user_id": "u-a", "type": "long_term", "content": "Researcher found the museum",
        "agent_id": "researcher", "run_id": "r3", "tags": "", "metadata": ""})
    assert made.status_code == 302, made.content
    memory = Memory.objects.get(agent_id="researcher")
    assert memory.run_id == "r3"
    detail = text(editor_client.get(made["Location"]))
    assert 'id="memory-agent"' in detail and "run r3" in detail


def test_a_format_5_index_whose_hashes_lack_the_scope_is_rebuilt(builtins, redis_client,
                                                                  empty_queues):
    from memories import queue as job_queue
    from search.index import postings
    from search.memory_search import memory_search

    ids = [create(f"lighthouse keeper log {n}", agent_id="planner").memory_id for n in range(6)]
    for memory_id in ids:  # as written before the agent scope was mirrored
        redis_client.hdel(store.key("u-a", "m", memory_id), "agent_id", "run_id")
    redis_client.set(store.key("u-a", "format"), "5")

    def by_planner():
        return {h.memory_id for h in memory_search(
            user_id="u-a", query="lighthouse keeper", limit=10, profile="bm25",
            agents=["planner"]).results}

    assert by_planner() == set()
    assert job_queue.get_queue("index").count == 1
    work()
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT
    assert by_planner() == set(ids)


def test_whole_namespace_operations_refuse_a_token_restricted_to_agents(admin_user):
    client = ApiClient(None)
    client.token = token_create(user=admin_user, agents=["planner"])
    for resp in (client.get("/export?user_id=u-a"), client.get("/conflicts?user_id=u-a"),
                 client.post("/cleanup", {"user_id": "u-a", "dry_run": True}),
                 client.post("/consolidate", {"user_id": "u-a", "dry_run": True})):
        assert resp.status_code == 403, resp.content
        assert resp.json()["error"]["field"] == "agent_id"
