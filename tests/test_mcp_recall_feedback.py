"""The recall log through MCP, driven by the ``mcp`` SDK's own client over both transports:
``search_memories`` answers a ``recall_id`` traced under the interface "mcp", and the
``recall_feedback`` tool records a grade or a useful flag per actor, refusing an unknown
recall (404) and a memory that was not among the recall's results (400, memory_id)."""

import pytest

from accounts.tokens import token_create
from recalls.models import RecallFeedback
from recalls.readers import recall_find
from tests.test_mcp import connect, error_of, run  # noqa: F401 (connect: a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_search_is_traced_under_mcp_and_feedback_is_recorded(connect, editor, viewer):  # noqa: F811
    editor_token, viewer_token = token_create(user=editor), token_create(user=viewer)

    async def search(client):
        kept = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Alice's passport is in the blue drawer"})
        other = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Alice renewed her gym card in March"})
        found = await client.call_tool("search_memories",
                                       {"user_id": "alice", "query": "where is the passport?"})
        recall_id = found.structured_content["recall_id"]
        kept_id = kept.structured_content["memory_id"]
        graded = await client.call_tool("recall_feedback", {
            "recall_id": recall_id, "memory_id": kept_id, "grade": 2, "note": "right drawer"})
        return (found.structured_content, kept_id, other.structured_content["memory_id"],
                graded)

    found, kept_id, other_id, graded = run(connect(editor_token), search)
    recall_id = found["recall_id"]
    assert recall_id.startswith("rc_")
    assert [h["memory_id"] for h in found["results"]] == [kept_id]
    assert not graded.is_error, graded
    assert graded.structured_content["recall_id"] == recall_id
    assert (graded.structured_content["grade"], graded.structured_content["note"]) == (
        2, "right drawer")

    trace = recall_find(recall_id)
    assert (trace.interface, trace.actor, trace.user_id, trace.query) == (
        "mcp", editor.username, "alice", "where is the passport?")
    assert [r.memory_id for r in trace.results.all()] == [kept_id]

    async def more(client):
        useful = await client.call_tool("recall_feedback", {
            "recall_id": recall_id, "memory_id": kept_id, "useful": False, "note": "moved"})
        unknown = await client.call_tool("recall_feedback", {
            "recall_id": "rc_0000000000000000", "memory_id": kept_id, "grade": 1})
        not_a_result = await client.call_tool("recall_feedback", {
            "recall_id": recall_id, "memory_id": other_id, "useful": True})
        both = await client.call_tool("recall_feedback", {
            "recall_id": recall_id, "memory_id": kept_id, "grade": 1, "useful": True})
        odd = [await client.call_tool("recall_feedback", {
            "recall_id": recall_id, "memory_id": kept_id, **body})
            for body in ({"grade": True}, {"useful": "yes"}, {"useful": 1})]
        return useful, unknown, not_a_result, both, odd

    useful, unknown, not_a_result, both, odd = run(connect(viewer_token), more)
    assert all(o.is_error for o in odd), odd  # no grade 1 from true, no true from "yes"
    assert not useful.is_error and useful.structured_content["grade"] == 0
    assert error_of(unknown)["status"] == 404
    assert error_of(not_a_result)["status"] == 400
    assert error_of(not_a_result)["error"]["field"] == "memory_id"
    assert error_of(both)["status"] == 400
    kept = sorted(RecallFeedback.objects.values_list("actor", "grade", "note", "query",
                                                     "user_id"))
    assert kept == [(editor.username, 2, "right drawer", "where is the passport?", "alice"),
                    (viewer.username, 0, "moved", "where is the passport?", "alice")]
