"""Extraction and infer through the MCP tools (the mcp SDK's own client, both transports)
and the Python client against the live server."""

import pytest
from memory_console_client import MemoryConsole
from memory_console_client.models import Extraction, Inferred

from accounts.tokens import token_create
from memories.models import Memory
from tests.test_client import FAST, make_token
from tests.test_mcp import connect, run  # noqa: F401 - the fixture

CHAT = [
    {"role": "user", "content": "Ana: Hi there!"},
    {"role": "assistant", "content": "Bot: Hello Ana, how can I help today?"},
    {"role": "user", "content": "Ana: I moved to Porto last month with my partner, who got a "
                                "job at a bank."},
    {"role": "assistant", "content": "Bot: That sounds exciting! How do you like it?"},
]
TRANSCRIPT = "\n".join(m["content"] for m in CHAT)


@pytest.mark.django_db
def test_mcp_extract_memories_and_add_memory_with_infer(connect, editor, viewer):  # noqa: F811
    token = token_create(user=editor)
    viewer_token = token_create(user=viewer)

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        await client.call_tool("create_session", {"user_id": "alice", "session_id": "s-m"})
        await client.call_tool("append_messages", {"session_id": "s-m", "messages": CHAT})
        dry = await client.call_tool("extract_memories", {"session_id": "s-m"})
        wrote = await client.call_tool("extract_memories", {"session_id": "s-m",
                                                            "dry_run": False})
        inferred = await client.call_tool("add_memory", {
            "user_id": "alice", "content": TRANSCRIPT, "infer": True, "conversation_id": "c"})
        plain = await client.call_tool("add_memory", {"user_id": "alice", "content": "plain"})
        return tools, dry, wrote, inferred, plain

    tools, dry, wrote, inferred, plain = run(connect(token), steps)
    assert tools["extract_memories"].output_schema
    assert "infer" in tools["add_memory"].input_schema["properties"]
    assert not dry.is_error, dry
    [cand] = dry.structured_content["candidates"]
    assert cand["seqs"] == [3] and cand["content"].startswith("Ana (")
    assert dry.structured_content["memory_ids"] is None
    ids = wrote.structured_content["memory_ids"]
    assert Memory.objects.get(memory_id=ids[0]).metadata["source"] == {"session_id": "s-m",
                                                                       "seqs": [3]}
    body = inferred.structured_content
    assert body["inferred"] is True and len(body["memories"]) == 1
    assert body["memories"][0]["content"].startswith("Ana: I moved to Porto")
    assert body["memories"][0]["conversation_id"] == "c"
    assert plain.structured_content["content"] == "plain"

    async def viewer_steps(client):
        ok = await client.call_tool("extract_memories", {"session_id": "s-m"})
        refused = await client.call_tool("extract_memories", {"session_id": "s-m",
                                                              "dry_run": False})
        return ok, refused

    ok, refused = run(connect(viewer_token), viewer_steps)
    assert not ok.is_error
    assert refused.is_error and refused.structured_content["status"] == 403


@pytest.mark.usefixtures("empty_queues")
def test_python_client_extract_infer_and_promote_edits(live_server, builtins):
    with MemoryConsole(live_server.url, make_token("cli-ed", "editor"), retry=FAST) as client:
        client.create_session("alice", session_id="s-c")
        client.append("s-c", CHAT)
        dry = client.extract("s-c")
        assert isinstance(dry, Extraction) and [c.seqs for c in dry.candidates] == [[3]]
        assert dry.memory_ids is None
        wrote = client.extract("s-c", dry_run=False)
        assert len(wrote.memory_ids) == 1
        inferred = client.remember("alice", TRANSCRIPT, infer=True)
        assert isinstance(inferred, Inferred) and inferred.inferred
        assert [m.content for m in inferred.memories] == [CHAT[2]["content"]]
        edited = client.promote_message("s-c", 3, content="Ana lives in Porto",
                                        type="short_term", importance=0.8)
        assert (edited.content, edited.type, edited.importance) == (
            "Ana lives in Porto", "short_term", 0.8)
