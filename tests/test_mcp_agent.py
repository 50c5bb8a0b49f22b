"""What a model meets in the MCP server: every parameter described, tool descriptions that
say when to call them, the ``memory_context`` prompt, a default namespace (a token
restricted to one, ``mcp_stdio --default-namespace``, the ``X-Memory-Namespace`` header) and
per-tool metrics. Driven by the ``mcp`` SDK's own client over both transports."""

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from prometheus_client import REGISTRY

from accounts.tokens import token_create
from memories import services
from memories.models import Memory
from tests.test_mcp import connect, error_of, run, stdio_client  # noqa: F401 (connect: a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

DEFAULTED = {"add_memory", "search_memories", "list_memories", "create_session"}


def header_client(live_server, token: str, namespace: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}",
                                       "X-Memory-Namespace": namespace},
                              timeout=httpx2.Timeout(30.0))
    return Client(streamable_http_client(f"{live_server.url}/mcp", http_client=http))


def _undescribed(schema: dict) -> list[str]:
    return [name for name, prop in schema.get("properties", {}).items()
            if not prop.get("description")]


def test_every_parameter_is_described_and_tools_say_when_to_call_them(connect, editor):  # noqa: F811
    async def steps(client):
        return (await client.list_tools()).tools, (await client.list_prompts()).prompts

    tools, prompts = run(connect(token_create(user=editor)), steps)
    missing = {t.name: _undescribed(t.input_schema) for t in tools}
    assert {name: params for name, params in missing.items() if params} == {}
    [append] = [t for t in tools if t.name == "append_messages"]
    nested = {name: schema for name, schema in append.input_schema.get("$defs", {}).items()}
    assert {name: _undescribed(schema) for name, schema in nested.items()
            if _undescribed(schema)} == {}
    described = {t.name: " ".join(t.description.split()) for t in tools}
    assert "before answering a question about the user" in described["search_memories"]
    assert "last week" in described["search_memories"]
    assert "lasting fact" in described["add_memory"]
    [prompt] = [p for p in prompts if p.name == "memory_context"]
    assert {(a.name, a.required) for a in prompt.arguments} == {("question", True),
                                                                 ("user_id", False)}
    assert all(a.description for a in prompt.arguments)


def test_a_token_restricted_to_one_namespace_needs_no_user_id(connect, editor):  # noqa: F811
    token = token_create(user=editor, namespaces=["alice"])

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {"content": "Alice drinks green tea"})
        found = await client.call_tool("search_memories", {"query": "green tea"})
        listed = await client.call_tool("list_memories", {})
        session = await client.call_tool("create_session", {"session_id": "s-a"})
        return tools, added, found, listed, session

    tools, added, found, listed, session = run(connect(token), steps)
    for name in DEFAULTED:
        assert "user_id" not in tools[name].input_schema.get("required", []), name
    assert added.structured_content["user_id"] == "alice"
    memory_id = added.structured_content["memory_id"]
    assert [h["memory_id"] for h in found.structured_content["results"]] == [memory_id]
    assert [m["memory_id"] for m in listed.structured_content["memories"]] == [memory_id]
    assert session.structured_content["user_id"] == "alice"


def test_without_a_default_a_missing_user_id_is_an_error_naming_it(connect, editor):  # noqa: F811
    token = token_create(user=editor)  # every namespace: no default

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {"content": "homeless fact"})
        found = await client.call_tool("search_memories", {"query": "fact"})
        try:
            await client.get_prompt("memory_context", {"question": "what do I like?"})
        except MCPError as exc:
            prompt = exc
        return tools, added, found, prompt

    tools, added, found, prompt = run(connect(token), steps)
    for name in DEFAULTED:
        assert "user_id" in tools[name].input_schema["required"], name
    for result in (added, found):
        body = error_of(result)
        assert body["status"] == 400 and body["error"]["field"] == "user_id"
        assert "default namespace" in body["error"]["message"]
    assert prompt.data["error"]["field"] == "user_id"
    assert not Memory.objects.exists()


def test_the_namespace_header_names_the_default_over_http(live_server, editor):
    import httpx

    token = token_create(user=editor)

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {"content": "Bob keeps bees"})
        named = await client.call_tool("add_memory", {"content": "Carol sings",
                                                      "user_id": "carol"})
        return tools, added, named

    tools, added, named = run(header_client(live_server, token, "bob"), steps)
    assert "user_id" not in tools["add_memory"].input_schema.get("required", [])
    assert added.structured_content["user_id"] == "bob"
    assert named.structured_content["user_id"] == "carol"  # a given user_id wins

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    bad = httpx.post(f"{live_server.url}/mcp", json=body, headers={
        **headers, "Authorization": f"Bearer {token}", "X-Memory-Namespace": "b" * 129})
    restricted = token_create(user=editor, namespaces=["alice"])
    outside = httpx.post(f"{live_server.url}/mcp", json=body, headers={
        **headers, "Authorization": f"Bearer {restricted}", "X-Memory-Namespace": "bob"})
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "X-Memory-Namespace"
    assert outside.status_code == 403
    assert outside.json()["error"]["field"] == "X-Memory-Namespace"


def test_stdio_takes_a_default_namespace_option(editor):
    token = token_create(user=editor)

    async def steps(client):
        return await client.call_tool("add_memory", {"content": "Dana runs marathons"})

    added = run(stdio_client(token, args=("--allow-empty-redis", "--default-namespace",
                                          "dana")), steps)
    assert added.structured_content["user_id"] == "dana"
    assert Memory.objects.get().user_id == "dana"


def test_the_memory_context_prompt_recalls_before_answering(connect, editor):  # noqa: F811
    services.memory_create(user_id="alice", content="Alice prefers green tea over coffee")
    services.memory_create(user_id="alice", content="Alice's sister lives in Porto")
    services.memory_create(user_id="bob", content="Bob prefers black tea")
    token = token_create(user=editor)

    async def steps(client):
        asked = await client.get_prompt("memory_context", {
            "question": "Which tea should I order?", "user_id": "alice"})
        nothing = await client.get_prompt("memory_context", {
            "question": "zeppelin schedules", "user_id": "alice"})
        return asked, nothing

    asked, nothing = run(connect(token), steps)
    context, question = [m.content.text for m in asked.messages]
    assert "Alice prefers green tea over coffee" in context
    assert "Bob" not in context and "Porto" not in context
    assert "add_memory" in context and "not instructions" in context
    assert question == "Which tea should I order?"
    assert "No memories of 'alice' matched" in nothing.messages[0].content.text


def _sample(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_tool_calls_are_counted_timed_and_their_errors_coded_by_tool(live_server, editor):
    """The live server runs in this process: its counters are this registry's."""
    from tests.test_mcp import http_client

    token = token_create(user=editor)
    calls = "memory_console_mcp_tool_calls_total"
    errors = "memory_console_mcp_tool_errors_total"
    before = {"search": _sample(calls, tool="search_memories"),
              "add": _sample(calls, tool="add_memory"),
              "invalid": _sample(errors, tool="add_memory", code="invalid"),
              "timed": _sample("memory_console_mcp_tool_duration_seconds_count",
                               tool="search_memories")}

    async def steps(client):
        await client.call_tool("search_memories", {"user_id": "alice", "query": "tea"})
        await client.call_tool("search_memories", {"user_id": "alice", "query": "coffee"})
        await client.call_tool("add_memory", {"user_id": "alice", "content": "  "})

    run(http_client(live_server, token), steps)
    assert _sample(calls, tool="search_memories") - before["search"] == 2
    assert _sample(calls, tool="add_memory") - before["add"] == 1
    assert _sample(errors, tool="add_memory", code="invalid") - before["invalid"] == 1
    assert (_sample("memory_console_mcp_tool_duration_seconds_count", tool="search_memories")
            - before["timed"]) == 2
    # A tool never called has its series, at its count so far.
    assert REGISTRY.get_sample_value(calls, {"tool": "resolve_conflict"}) is not None


def _stdio_run(*extra, prefix: str | None = None):
    """``manage.py mcp_stdio`` with stdin closed (it serves nothing and ends): the
    CompletedProcess."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    from tests.test_mcp import ROOT, _database_url

    env = {**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
           "MEMORY_KEY_PREFIX": prefix or settings.MEMORY_KEY_PREFIX}
    return subprocess.run([sys.executable, "manage.py", "mcp_stdio", *extra], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_stdio_says_what_it_uses_and_refuses_a_redis_without_product_data(editor):
    """A config copied without REDIS_URL used to start on whatever Redis DB 0 held."""
    from django.conf import settings

    token = token_create(user=editor)
    empty = _stdio_run("--token", token)
    assert empty.returncode != 0
    assert "holds no Memory Console data" in empty.stderr
    assert "--allow-empty-redis" in empty.stderr and settings.REDIS_URL in empty.stderr
    assert "database" in empty.stderr and empty.stdout == ""  # stdout is MCP's alone

    allowed = _stdio_run("--token", token, "--allow-empty-redis")
    assert allowed.returncode == 0, allowed.stderr
    services.memory_create(user_id="alice", content="the prefix now holds data")
    started = _stdio_run("--token", token)
    assert started.returncode == 0, started.stderr
    assert f"Redis {settings.REDIS_URL} (key prefix {settings.MEMORY_KEY_PREFIX!r})" in (
        started.stderr)
    assert "mcp_stdio: database " in started.stderr and started.stdout == ""


def test_stdio_refuses_a_default_namespace_outside_its_token(editor):
    token = token_create(user=editor, namespaces=["alice"])
    refused = _stdio_run("--token", token, "--allow-empty-redis", "--default-namespace", "bob")
    assert refused.returncode != 0 and "'bob'" in refused.stderr


def test_the_redis_url_is_printed_without_its_password():
    from integrations.management.commands.mcp_stdio import redacted

    assert redacted("redis://:s3cret@10.0.0.5:6380/2") == "redis://:***@10.0.0.5:6380/2"
    assert redacted("rediss://app:s3cret@cache/0") == "rediss://app:***@cache/0"
    assert redacted("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
