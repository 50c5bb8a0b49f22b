"""Facts over time through MCP, driven by the ``mcp`` SDK's own client over both transports
(as tests/test_mcp.py): supersedes and valid_from on add_memory, as_of and
include_superseded on search_memories, invalidate_memory / revalidate_memory, and the review
queue (list_conflicts, resolve_conflict)."""

import pytest

from accounts.tokens import token_create
from memories.models import Memory
from tests.test_mcp import connect, error_of, run  # noqa: F401 (connect: a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

PORTO = "Alice lives in Porto, near the river."
MADRID = "Alice moved to Madrid; she no longer lives in Porto."
QUESTION = "where does Alice live"


async def _porto_then_madrid(client):
    porto = await client.call_tool("add_memory", {
        "user_id": "alice", "content": PORTO, "valid_from": "2026-06-01T00:00:00Z",
        "supersession": "off"})
    porto_id = porto.structured_content["memory_id"]
    madrid = await client.call_tool("add_memory", {
        "user_id": "alice", "content": MADRID, "valid_from": "2026-08-01T00:00:00Z",
        "supersedes": [porto_id], "supersession": "off"})
    return porto, madrid


def _ids(result) -> list[str]:
    assert not result.is_error, result
    return [h["memory_id"] for h in result.structured_content["results"]]


def test_madrid_now_porto_as_of_july_both_when_asked(connect, editor):  # noqa: F811
    token = token_create(user=editor)

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        porto, madrid = await _porto_then_madrid(client)
        now = await client.call_tool("search_memories", {"user_id": "alice",
                                                         "query": QUESTION})
        july = await client.call_tool("search_memories", {
            "user_id": "alice", "query": QUESTION, "as_of": "2026-07-15T00:00:00Z"})
        both = await client.call_tool("search_memories", {
            "user_id": "alice", "query": QUESTION, "include_superseded": True})
        old = await client.call_tool("get_memory", {
            "memory_id": porto.structured_content["memory_id"]})
        return tools, porto, madrid, now, july, both, old

    tools, porto, madrid, now, july, both, old = run(connect(token), steps)
    add_args = tools["add_memory"].input_schema["properties"]
    assert "no longer true" in add_args["supersedes"]["description"]
    assert {"valid_from", "supersession"} <= set(add_args)
    assert {"supersedes", "valid_from", "supersession"} <= set(
        tools["update_memory"].input_schema["properties"])
    search_args = tools["search_memories"].input_schema["properties"]
    assert search_args["as_of"]["description"] and search_args["include_superseded"][
        "description"]
    hit_shape = tools["search_memories"].output_schema["$defs"]["RecallHit"]["properties"]
    assert {"valid_from", "valid_until", "superseded_by"} <= set(hit_shape)
    assert {"invalidate_memory", "revalidate_memory", "list_conflicts",
            "resolve_conflict"} <= set(tools)

    porto_id = porto.structured_content["memory_id"]
    madrid_id = madrid.structured_content["memory_id"]
    assert madrid.structured_content["supersedes"] == [porto_id]
    assert madrid.structured_content["valid_from"].startswith("2026-08-01")
    assert _ids(now) == [madrid_id]
    assert now.structured_content["results"][0]["valid_until"] is None
    assert now.structured_content["results"][0]["explain"]["validity"] is None
    assert _ids(july) == [porto_id]
    hit = july.structured_content["results"][0]
    assert hit["valid_from"].startswith("2026-06-01")
    assert hit["valid_until"].startswith("2026-08-01") and hit["superseded_by"] == madrid_id
    assert set(_ids(both)) == {porto_id, madrid_id}
    by_id = {h["memory_id"]: h for h in both.structured_content["results"]}
    assert by_id[porto_id]["explain"]["validity"] == (
        f"superseded by {madrid_id} since {by_id[porto_id]['valid_until']}")
    assert old.structured_content["superseded_by"] == madrid_id
    assert old.structured_content["content"] == PORTO  # kept, not overwritten


def test_invalidate_and_revalidate(connect, editor):  # noqa: F811
    token = token_create(user=editor)

    async def steps(client):
        fact = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Bob is the on-call engineer for billing.",
            "supersession": "off"})
        memory_id = fact.structured_content["memory_id"]
        ended = await client.call_tool("invalidate_memory", {
            "memory_id": memory_id, "reason": "rotation ended"})
        gone = await client.call_tool("search_memories", {"user_id": "alice",
                                                          "query": "on-call billing"})
        twice = await client.call_tool("invalidate_memory", {
            "memory_id": memory_id, "reason": "again"})
        back = await client.call_tool("revalidate_memory", {
            "memory_id": memory_id, "reason": "rotation extended"})
        found = await client.call_tool("search_memories", {"user_id": "alice",
                                                           "query": "on-call billing"})
        return memory_id, ended, gone, twice, back, found

    memory_id, ended, gone, twice, back, found = run(connect(token), steps)
    assert not ended.is_error and ended.structured_content["valid_until"] is not None
    assert ended.structured_content["superseded_by"] is None
    assert _ids(gone) == []
    assert error_of(twice)["status"] == 409 and error_of(twice)["error"]["field"] == "memory_id"
    assert not back.is_error and back.structured_content["valid_until"] is None
    assert _ids(found) == [memory_id]
    assert Memory.objects.get(pk=memory_id).version == 3


def test_errors_are_tool_errors_naming_the_field(connect, editor, viewer):  # noqa: F811
    token = token_create(user=editor)
    viewer_token = token_create(user=viewer)

    async def steps(client):
        unknown = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Alice lives in Lisbon.",
            "supersedes": ["mem_0000000000000000"]})
        bad_date = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Alice lives in Faro.", "valid_from": "next week"})
        bad_as_of = await client.call_tool("search_memories", {
            "user_id": "alice", "query": QUESTION, "as_of": "July"})
        missing = await client.call_tool("invalidate_memory", {
            "memory_id": "mem_0000000000000000", "reason": "r"})
        fact = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Alice works at Acme.", "supersession": "off"})
        no_reason = await client.call_tool("revalidate_memory", {
            "memory_id": fact.structured_content["memory_id"], "reason": ""})
        no_conflict = await client.call_tool("resolve_conflict", {"conflict_id": 999999,
                                                                  "accept": True})
        return unknown, bad_date, bad_as_of, missing, no_reason, no_conflict

    async def viewer_steps(client):
        listed = await client.call_tool("list_conflicts", {"user_id": "alice"})
        refused = await client.call_tool("resolve_conflict", {"conflict_id": 1,
                                                              "accept": False})
        return listed, refused

    unknown, bad_date, bad_as_of, missing, no_reason, no_conflict = run(connect(token), steps)
    assert error_of(unknown)["status"] == 404
    assert error_of(unknown)["error"]["field"] == "supersedes"
    assert error_of(bad_date)["status"] == 400
    assert error_of(bad_date)["error"]["field"] == "valid_from"
    assert error_of(bad_as_of)["error"]["field"] == "as_of"
    assert error_of(missing)["status"] == 404
    assert error_of(missing)["error"]["field"] == "memory_id"
    assert error_of(no_reason)["status"] == 400
    assert error_of(no_reason)["error"]["field"] == "reason"
    assert error_of(no_conflict)["status"] == 404
    assert error_of(no_conflict)["error"]["field"] == "conflict_id"
    assert list(Memory.objects.values_list("content", flat=True)) == ["Alice works at Acme."]

    listed, refused = run(connect(viewer_token), viewer_steps)
    assert not listed.is_error and listed.structured_content["conflicts"] == []
    assert error_of(refused)["status"] == 403


def test_the_review_queue_lists_accepts_and_rejects(connect, editor):  # noqa: F811
    token = token_create(user=editor)

    async def steps(client):
        porto = await client.call_tool("add_memory", {"user_id": "alice",
                                                      "content": "Alice lives in Porto."})
        madrid = await client.call_tool("add_memory", {"user_id": "alice",
                                                       "content": "Alice moved to Madrid.",
                                                       "supersession": "propose"})
        listed = await client.call_tool("list_conflicts", {"user_id": "alice"})
        conflict_id = listed.structured_content["conflicts"][0]["id"]
        accepted = await client.call_tool("resolve_conflict", {
            "conflict_id": conflict_id, "accept": True, "reason": "checked with Alice"})
        now = await client.call_tool("search_memories", {"user_id": "alice",
                                                         "query": "Alice Porto Madrid"})
        rejected = await client.call_tool("resolve_conflict", {
            "conflict_id": conflict_id, "accept": False, "reason": "she has both"})
        after = await client.call_tool("search_memories", {"user_id": "alice",
                                                           "query": "Alice Porto Madrid"})
        return porto, madrid, listed, accepted, now, rejected, after

    porto, madrid, listed, accepted, now, rejected, after = run(connect(token), steps)
    porto_id = porto.structured_content["memory_id"]
    madrid_id = madrid.structured_content["memory_id"]
    [c] = listed.structured_content["conflicts"]
    assert (c["newer"], c["older"], c["status"]) == (madrid_id, porto_id, "open")
    assert 0 < c["confidence"] <= 1
    assert accepted.structured_content["status"] == "accepted"
    assert accepted.structured_content["decision_reason"] == "checked with Alice"
    assert _ids(now) == [madrid_id]
    assert rejected.structured_content["status"] == "rejected"
    assert set(_ids(after)) == {porto_id, madrid_id}
