"""One agent's memories are out of reach of another's writes: supersession (explicit
``supersedes``, the proposals and ``apply``), the dedup of update, restore and promote, and
consolidation all stay within one ``agent_id`` (``""``, unscoped, is an agent of its own).
Real Redis, real database."""

import anyio
import pytest
from django.test import override_settings

from accounts.tokens import token_create
from memories import services
from memories.errors import NotFound
from memories.models import Conflict, Memory
from operations import consolidate
from tests.conftest import ApiClient
from tests.helpers import create
from tests.test_mcp import http_client

pytestmark = pytest.mark.django_db(transaction=True)

PORTO = "Alice lives in Porto."
MADRID = "Alice moved to Madrid."


@pytest.fixture
def planner_api(editor):
    client = ApiClient(None)
    client.token = token_create(user=editor, agents=["planner"])
    return client


def _holds(memory) -> bool:
    memory = Memory.objects.get(pk=memory.memory_id)
    return memory.valid_until is None and memory.superseded_by is None


def test_supersedes_naming_another_agents_memory_is_a_404_like_an_unknown_id(
        planner_api, api, live_server, editor):
    theirs = create(PORTO, agent_id="researcher", supersession="off")
    nobody = create("Alice lives in Faro.", supersession="off")
    mine = create("Alice lives in Braga.", agent_id="planner", supersession="off")
    unknown = planner_api.post("/memories", {"user_id": "u-a", "content": MADRID,
                                             "agent_id": "planner",
                                             "supersedes": ["mem_0000000000000000"]})
    for client, older in ((planner_api, theirs), (api, theirs), (api, nobody)):
        resp = client.post("/memories", {"user_id": "u-a", "content": MADRID,
                                         "agent_id": "planner", "supersession": "off",
                                         "supersedes": [older.memory_id]})
        assert resp.status_code == unknown.status_code == 404, resp.content
        assert resp.json()["error"]["field"] == unknown.json()["error"]["field"] == "supersedes"
        patched = client.patch(f"/memories/{mine.memory_id}",
                               {"supersedes": [older.memory_id]})
        assert patched.status_code == 404, patched.content
        assert patched.json()["error"]["field"] == "supersedes"
    with pytest.raises(NotFound):
        services.memory_update(memory_id=nobody.memory_id, supersedes=[theirs.memory_id])

    token = token_create(user=editor, agents=["planner"])

    async def mcp_update():
        async with http_client(live_server, token) as client:
            return await client.call_tool("update_memory", {
                "memory_id": mine.memory_id, "supersedes": [theirs.memory_id]})

    refused = anyio.run(mcp_update)
    assert refused.is_error
    assert refused.structured_content["status"] == 404
    assert refused.structured_content["error"]["field"] == "supersedes"
    assert all(_holds(m) for m in (theirs, nobody, mine))
    assert not Memory.objects.filter(content=MADRID).exists()
    # The same agent's memory it may supersede.
    own = planner_api.post("/memories", {"user_id": "u-a", "content": MADRID,
                                         "agent_id": "planner", "supersession": "off",
                                         "supersedes": [mine.memory_id]})
    assert own.status_code == 201 and own.json()["supersedes"] == [mine.memory_id]


def test_proposals_and_apply_weigh_only_the_same_agents_memories(planner_api):
    mine = create(PORTO, agent_id="planner", supersession="off")
    theirs = create(PORTO, agent_id="researcher", supersession="off")
    unscoped = create(PORTO, supersession="off")
    with override_settings(MEMORY_SUPERSESSION="apply", MEMORY_SUPERSESSION_APPLY_AT=0.5):
        resp = planner_api.post("/memories", {"user_id": "u-a", "content": MADRID,
                                              "agent_id": "planner"})
    assert resp.status_code == 201, resp.content
    assert resp.json()["supersedes"] == [mine.memory_id]
    assert list(Conflict.objects.values_list("older_id", flat=True)) == [mine.memory_id]
    assert _holds(theirs) and _holds(unscoped) and not _holds(mine)


def test_update_and_restore_never_answer_another_agents_duplicate(planner_api, api):
    theirs = create("The deploy window is Friday", agent_id="researcher")
    mine = create("The deploy window is Monday", agent_id="planner")
    patched = planner_api.patch(f"/memories/{mine.memory_id}",
                                {"content": "The deploy window is Friday"})
    assert patched.status_code == 200, patched.content
    gone = create("The freeze starts in May", agent_id="planner")
    services.memory_forget(memory_id=gone.memory_id)
    create("The freeze starts in May", agent_id="researcher")
    create("The freeze starts in May")
    restored = planner_api.post(f"/memories/{gone.memory_id}/restore", {})
    assert restored.status_code == 200, restored.content
    assert restored.json()["deleted_at"] is None
    # Within the agent the dedup still holds, naming the agent's own memory.
    other = create("The deploy window is Sunday", agent_id="planner")
    clash = planner_api.patch(f"/memories/{other.memory_id}",
                              {"content": "The deploy window is Friday"})
    assert clash.status_code == 409
    assert clash.json()["error"]["field"] == "content"
    assert clash.json()["error"]["duplicate_of"] == mine.memory_id != theirs.memory_id


def test_promote_keeps_the_agent_scope_and_dedups_within_the_agent(planner_api):
    theirs = create("Alice prefers the window seat", agent_id="researcher")
    unscoped = create("Alice prefers the window seat")
    working = create("Alice prefers the window seat", agent_id="planner", run_id="r4",
                     conversation_id="c1", type="working")
    promoted = planner_api.post(f"/memories/{working.memory_id}/promote", {})
    assert promoted.status_code == 201, promoted.content
    body = promoted.json()
    assert body["memory_id"] not in (theirs.memory_id, unscoped.memory_id)
    assert body["deduplicated"] is False
    assert (body["agent_id"], body["run_id"], body["type"]) == ("planner", "r4", "long_term")
    assert planner_api.get(f"/memories/{body['memory_id']}").status_code == 200
    again = planner_api.post(f"/memories/{working.memory_id}/promote", {})
    assert again.status_code == 200 and again.json()["memory_id"] == body["memory_id"]


ARGON_LONG = "Use argon2 for password hashing. Rotate keys yearly."
ARGON_SHORT = "Use argon2 for password hashing."


def test_consolidation_groups_within_one_agent_and_the_merge_carries_it(builtins):
    long_ = create(ARGON_LONG, agent_id="planner", run_id="r1")
    create(ARGON_SHORT, agent_id="researcher", run_id="r1")
    create(ARGON_SHORT)
    assert consolidate.consolidation_plan(user_id="u-a").groups == []
    across = list(Memory.objects.filter(content=ARGON_SHORT).values_list("memory_id",
                                                                         flat=True))
    with pytest.raises(Exception, match="agent_id") as refused:
        consolidate.resolve_groups(user_id="u-a", groups=[[long_.memory_id, across[0]]])
    assert refused.value.field == "groups"
    for memory_id in across:  # the IDF is the namespace's: the plan as for two texts
        services.memory_forget(memory_id=memory_id)
    short = create(ARGON_SHORT, agent_id="planner", run_id="r1")
    [group] = consolidate.consolidation_plan(user_id="u-a").groups
    assert group.memory_ids == [long_.memory_id, short.memory_id]
    merged = consolidate.consolidate_group(memory_ids=group.memory_ids)
    assert (merged.agent_id, merged.run_id) == ("planner", "r1")
    other_run = create("Use argon2 for password hashing. Rotate keys yearly, in May.",
                       agent_id="planner", run_id="r2")
    merged_again = consolidate.consolidate_group(memory_ids=[merged.memory_id,
                                                             other_run.memory_id])
    assert (merged_again.agent_id, merged_again.run_id) == ("planner", "")
