"""The MCP server, driven by the ``mcp`` SDK's own client over both transports: Streamable
HTTP against the live server (``/mcp``) and stdio against ``manage.py mcp_stdio`` spawned as
a subprocess. Both reach the real database and Redis of the test run."""

import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx2
import pytest
from django.conf import settings
from django.db import connection
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from accounts.tokens import token_create
from memories.models import Memory

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"add_memory", "search_memories", "get_memory", "update_memory", "delete_memory",
         "list_memories", "append_messages", "get_context", "promote", "create_session"}


def _database_url() -> str:
    """The URL of the database this test uses (the test database), for a subprocess."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def http_client(live_server, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(30.0))
    return Client(streamable_http_client(f"{live_server.url}/mcp", http_client=http))


def stdio_client(token: str, *, args=("--allow-empty-redis",), **env) -> Client:
    # The subprocess runs this run's settings on this test's database, Redis and prefix
    # (which holds no data before the test writes some: hence --allow-empty-redis).
    env = {"DJANGO_SETTINGS_MODULE": os.environ["DJANGO_SETTINGS_MODULE"],
           "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
           "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX, "MEMORY_CONSOLE_TOKEN": token,
           "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **env}
    return Client(StdioServerParameters(command=sys.executable,
                                        args=["manage.py", "mcp_stdio", *args],
                                        env=env, cwd=str(ROOT)))


@pytest.fixture(params=["http", "stdio"])
def connect(request, live_server):
    """``connect(token)`` → an SDK client over this test's transport."""
    if request.param == "http":
        return lambda token: http_client(live_server, token)
    return stdio_client


def run(client: Client, steps):
    """Open ``client``, run ``await steps(client)``, return what it returns."""
    async def main():
        async with client:
            return await steps(client)
    return anyio.run(main)


def error_of(result) -> dict:
    assert result.is_error, result
    return result.structured_content


@pytest.mark.django_db(transaction=True)
def test_remember_recall_forget_round_trip(connect, editor):
    token = token_create(user=editor)

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {
            "user_id": "alice", "content": "Alice prefers green tea over coffee"})
        memory_id = added.structured_content["memory_id"]
        found = await client.call_tool("search_memories",
                                       {"user_id": "alice", "query": "which tea does she drink?"})
        read = await client.read_resource(f"memory://{memory_id}")
        forgot = await client.call_tool("delete_memory", {"memory_id": memory_id,
                                                          "reason": "asked to forget"})
        after = await client.call_tool("search_memories",
                                       {"user_id": "alice", "query": "green tea"})
        got = await client.call_tool("get_memory", {"memory_id": memory_id})
        return tools, added, found, read, forgot, after, got

    tools, added, found, read, forgot, after, got = run(connect(token), steps)
    assert set(tools) >= TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.output_schema
    assert tools["search_memories"].annotations.read_only_hint is True
    assert tools["delete_memory"].annotations.destructive_hint is True
    assert tools["add_memory"].annotations.read_only_hint is False

    assert not added.is_error and added.structured_content["deduplicated"] is False
    memory_id = added.structured_content["memory_id"]
    hits = found.structured_content["results"]
    assert [h["memory_id"] for h in hits] == [memory_id]
    assert set(hits[0]["explain"]["top_terms"]) == {"tea"}
    assert json.loads(read.contents[0].text)["content"] == "Alice prefers green tea over coffee"
    assert forgot.structured_content["forgotten"] is True
    assert after.structured_content["results"] == []
    assert got.structured_content["deleted_at"] is not None
    memory = Memory.objects.get(memory_id=memory_id)
    assert memory.deleted_at is not None and memory.deleted_by == editor.username


@pytest.mark.django_db(transaction=True)
def test_a_viewer_reads_but_cannot_write(connect, viewer):
    token = token_create(user=viewer)

    async def steps(client):
        refused = await client.call_tool("add_memory", {"user_id": "alice", "content": "x y"})
        listed = await client.call_tool("list_memories", {"user_id": "alice"})
        return refused, listed

    refused, listed = run(connect(token), steps)
    assert error_of(refused)["status"] == 403
    assert error_of(refused)["error"]["code"] == "forbidden"
    assert not listed.is_error and listed.structured_content["memories"] == []
    assert not Memory.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_restricted_token_sees_only_its_namespaces(connect, editor):
    from tests.helpers import create

    other = create("bob keeps bees in the garden", user_id="bob")
    token = token_create(user=editor, namespaces=["alice"])

    async def steps(client):
        write = await client.call_tool("add_memory", {"user_id": "bob", "content": "hello"})
        search = await client.call_tool("search_memories", {"user_id": "bob", "query": "bees"})
        get = await client.call_tool("get_memory", {"memory_id": other.memory_id})
        try:
            await client.read_resource(f"memory://{other.memory_id}")
        except MCPError as exc:
            resource = exc
        else:
            resource = None
        own = await client.call_tool("add_memory", {"user_id": "alice", "content": "hello"})
        return write, search, get, resource, own

    write, search, get, resource, own = run(connect(token), steps)
    assert error_of(write)["error"] == {"code": "forbidden", "field": "user_id",
                                        "message": "this token may not access namespace 'bob'"}
    assert error_of(search)["status"] == 403
    # Outside its namespaces a memory does not even exist for the token, as in the REST API.
    assert error_of(get)["status"] == 404 and error_of(get)["error"]["field"] == "memory_id"
    assert resource is not None and resource.code == -32002
    assert resource.data["error"]["code"] == "not_found"
    assert not own.is_error
    assert set(Memory.objects.values_list("user_id", flat=True)) == {"alice", "bob"}


@pytest.mark.django_db(transaction=True)
def test_sessions_context_and_promotion(connect, editor):
    token = token_create(user=editor)

    async def steps(client):
        made = await client.call_tool("create_session", {"user_id": "alice",
                                                         "session_id": "s-1"})
        one = await client.call_tool("append_messages", {
            "session_id": "s-1", "role": "user", "content": "I moved to Lisbon in May"})
        two = await client.call_tool("append_messages", {"session_id": "s-1", "messages": [
            {"role": "assistant", "content": "Noted: Lisbon since May"},
            {"role": "user", "content": "And I keep bees"}]})
        context = await client.call_tool("get_context", {"session_id": "s-1", "last": 2})
        resource = await client.read_resource("session://s-1/context")
        promoted = await client.call_tool("promote", {"session_id": "s-1", "seq": 1})
        again = await client.call_tool("promote", {"session_id": "s-1", "seq": 1})
        both = await client.call_tool("append_messages", {
            "session_id": "s-1", "role": "user", "content": "x", "messages": []})
        return made, one, two, context, resource, promoted, again, both

    made, one, two, context, resource, promoted, again, both = run(connect(token), steps)
    assert made.structured_content["session_id"] == "s-1"
    assert one.structured_content == {"length": 1}
    assert two.structured_content == {"length": 3}
    ctx = context.structured_content
    assert ctx["total"] == 3
    assert [m["content"] for m in ctx["messages"]] == ["Noted: Lisbon since May",
                                                        "And I keep bees"]
    assert len(json.loads(resource.contents[0].text)["messages"]) == 3
    memory = promoted.structured_content
    assert memory["type"] == "long_term" and memory["conversation_id"] is None
    assert memory["content"] == "I moved to Lisbon in May" and memory["deduplicated"] is False
    assert again.structured_content["memory_id"] == memory["memory_id"]
    assert again.structured_content["deduplicated"] is True
    assert error_of(both)["error"]["field"] == "messages"


@pytest.mark.django_db(transaction=True)
def test_promote_edits_a_session_message_before_writing_it(connect, editor):
    token = token_create(user=editor)

    async def steps(client):
        await client.call_tool("create_session", {"user_id": "alice", "session_id": "s-2",
                                                  "agent_id": "planner", "run_id": "run-7"})
        await client.call_tool("append_messages", {
            "session_id": "s-2", "role": "user", "content": "um so I moved to Lisbon in May"})
        edited = await client.call_tool("promote", {
            "session_id": "s-2", "seq": 1, "content": "Alice moved to Lisbon in May 2026",
            "type": "short_term", "importance": 0.9})
        plain = await client.call_tool("add_memory", {"user_id": "alice",
                                                      "content": "Alice keeps bees",
                                                      "type": "working"})
        refused = await client.call_tool("promote", {
            "memory_id": plain.structured_content["memory_id"], "content": "other"})
        return edited, refused

    edited, refused = run(connect(token), steps)
    memory = edited.structured_content
    assert memory["content"] == "Alice moved to Lisbon in May 2026"
    assert memory["type"] == "short_term" and memory["importance"] == 0.9
    assert memory["metadata"]["promoted_from"] == {"session_id": "s-2", "seq": 1}
    assert (memory["agent_id"], memory["run_id"]) == ("planner", "run-7")
    assert error_of(refused)["error"]["field"] == "content"
    assert not Memory.objects.filter(content="other").exists()


@pytest.mark.django_db(transaction=True)
def test_errors_name_the_field_as_the_rest_api_does(connect, editor):
    token = token_create(user=editor)

    async def steps(client):
        added = await client.call_tool("add_memory", {"user_id": "alice", "content": "v1 text"})
        memory_id = added.structured_content["memory_id"]
        edited = await client.call_tool("update_memory", {
            "memory_id": memory_id, "content": "v2 text", "version": 1, "reason": "fix"})
        stale = await client.call_tool("update_memory", {
            "memory_id": memory_id, "content": "v3 text", "version": 1})
        unknown = await client.call_tool("add_memory", {"user_id": "alice", "content": "x",
                                                        "colour": "red"})
        blank = await client.call_tool("add_memory", {"user_id": "alice", "content": "  "})
        bad_type = await client.call_tool("add_memory", {"user_id": "alice", "content": "y",
                                                         "type": "forever"})
        limit = await client.call_tool("search_memories", {"user_id": "alice", "query": "v2",
                                                           "limit": 101})
        missing = await client.call_tool("get_memory", {"memory_id": "mem_0000000000000000"})
        nul = await client.call_tool("add_memory", {"user_id": "alice", "content": "a\x00b",
                                                    "metadata": {"k": ["ok", "x\x00"]}})
        return edited, stale, unknown, blank, bad_type, limit, missing, nul

    edited, stale, unknown, blank, bad_type, limit, missing, nul = run(connect(token), steps)
    assert edited.structured_content["version"] == 2
    assert error_of(stale)["status"] == 409
    assert error_of(stale)["error"]["current_version"] == 2
    assert error_of(unknown)["error"] == {"code": "invalid", "field": "colour",
                                          "message": "unknown field 'colour'"}
    assert error_of(blank)["status"] == 400 and error_of(blank)["error"]["field"] == "content"
    assert error_of(bad_type)["error"]["field"] == "type"
    assert error_of(limit)["error"]["field"] == "limit"
    assert error_of(missing)["status"] == 404
    assert error_of(nul)["error"]["field"] == "content"
    assert Memory.objects.get().content == "v2 text"


@pytest.mark.django_db(transaction=True)
def test_list_memories_pages_newest_first(connect, editor):
    import datetime as dt

    from memories import services

    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    ids = [services.memory_create(user_id="alice", content=f"note number {n}",
                                  created_at=start + dt.timedelta(hours=n))[0].memory_id
           for n in range(5)]
    services.memory_forget(memory_id=ids[0])
    token = token_create(user=editor)

    async def steps(client):
        pages, cursor = [], None
        while True:
            args = {"user_id": "alice", "limit": 2} | ({"cursor": cursor} if cursor else {})
            page = (await client.call_tool("list_memories", args)).structured_content
            pages.append([m["memory_id"] for m in page["memories"]])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        bad = await client.call_tool("list_memories", {"user_id": "alice", "cursor": "%%"})
        every = await client.call_tool("list_memories", {"user_id": "alice",
                                                         "include_forgotten": True})
        return pages, bad, every

    pages, bad, every = run(connect(token), steps)
    assert pages == [[ids[4], ids[3]], [ids[2], ids[1]]]
    assert error_of(bad)["error"]["field"] == "cursor"
    assert [m["memory_id"] for m in every.structured_content["memories"]] == ids[::-1]


@pytest.mark.django_db(transaction=True)
def test_list_memories_answers_a_tampered_cursor_with_a_tool_error_naming_it(connect, editor):
    """The REST list's codec: a cursor whose elements have the wrong types is a tool error
    (status 400, field ``cursor``), not the SDK's bare "Error executing tool"."""
    import base64

    def cursor(key) -> str:
        return base64.urlsafe_b64encode(json.dumps(key).encode()).decode()

    tampered = [cursor(["2026-12-04T01:32:02+00:00", None]), cursor([None, None]),
                cursor([None, "mem_0000000000000001"]), cursor([1, 2]), cursor([[], {}]),
                cursor(["2026-12-04T01:32:02+00:00", "a\x00b"]), cursor(["not a date", "x"]),
                cursor(["2026-12-04T01:32:02+00:00"]), cursor({"a": 1}), "%%",
                # moments outside years 1-9999 once in UTC (were an OverflowError)
                cursor(["9999-12-31T23:59:59-14:00", "mem_x"]),
                cursor(["0001-01-01T00:00:00+14:00", "mem_x"])]
    token = token_create(user=editor)

    async def steps(client):
        return [await client.call_tool("list_memories", {"user_id": "alice", "cursor": c})
                for c in tampered]

    for c, result in zip(tampered, run(connect(token), steps), strict=True):
        body = error_of(result)
        assert body["status"] == 400 and body["error"]["field"] == "cursor", (c, body)
        assert "cursor" in body["error"]["message"]


@pytest.mark.django_db(transaction=True)
def test_http_refuses_a_missing_or_revoked_token(live_server, editor):
    import httpx

    from accounts.tokens import token_revoke

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    anonymous = httpx.post(f"{live_server.url}/mcp", json=body, headers=headers)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "unauthorized"
    token = token_create(user=editor)
    token_revoke(prefix=token[:10])
    revoked = httpx.post(f"{live_server.url}/mcp", json=body,
                         headers={**headers, "Authorization": f"Bearer {token}"})
    assert revoked.status_code == 401


@pytest.mark.django_db(transaction=True)
def test_stdio_refuses_to_start_without_a_live_token(editor):
    import subprocess

    env = {**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
           "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX}
    env.pop("MEMORY_CONSOLE_TOKEN", None)
    for extra in ([], ["--token", "mc_not-a-token"]):
        done = subprocess.run([sys.executable, "manage.py", "mcp_stdio", *extra], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert done.returncode != 0
        assert "token" in done.stderr


@pytest.mark.django_db(transaction=True)
def test_the_context_resource_takes_session_ids_with_slashes_percent_encoded(live_server, editor):
    """Session ids may hold ``/`` (as on every REST route): the resource URI carries them
    percent-encoded (RFC 6570 simple expansion), including ``..`` and a leading ``/``,
    which are ids here, not paths."""
    token = token_create(user=editor)
    ids = ["team/a", "/lead", "a/../b", "50%/off", "q?x=1#frag"]

    async def steps(client):
        out = {}
        for sid in ids:
            await client.call_tool("create_session", {"user_id": "alice", "session_id": sid})
            await client.call_tool("append_messages", {"session_id": sid, "role": "user",
                                                       "content": f"hello from {sid}"})
            quoted = quote(sid, safe="")
            out[sid] = await client.read_resource(f"session://{quoted}/context")
        return out

    out = run(http_client(live_server, token), steps)
    for sid in ids:
        body = json.loads(out[sid].contents[0].text)
        assert [m["content"] for m in body["messages"]] == [f"hello from {sid}"]


def _post(live_server, token: str | None, body, **headers):
    """A raw POST to ``/mcp`` (what a client that is not the SDK sends), 10 s at most."""
    import httpx

    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", **headers}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{live_server.url}/mcp", content=content, headers=headers, timeout=10)


def _modern(method: str, params: dict) -> tuple[dict, dict]:
    """A request on the SDK's 2026-07-28 wire (one POST, no handshake): body and headers."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta, **params}}
    return body, {"MCP-Protocol-Version": "2026-07-28", "MCP-Method": method}


@pytest.mark.django_db(transaction=True)
def test_an_oversized_body_gets_the_rest_apis_json_413(live_server, editor):
    import httpx

    token = token_create(user=editor)
    content = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"user_id": "a", "content": content}}}
    mcp = _post(live_server, token, body)
    rest = httpx.post(f"{live_server.url}/api/v1/memories", timeout=10,
                      json={"user_id": "a", "content": content},
                      headers={"Authorization": f"Bearer {token}"})
    assert mcp.status_code == rest.status_code == 413
    assert mcp.json() == rest.json()
    assert mcp.json()["error"]["code"] == "too_large"
    assert not Memory.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_http_errors_are_json(live_server, editor):
    """Every refusal is JSON, never an HTML page or an empty body: the SDK's own (JSON-RPC
    errors) and those made before it (token, Host, method, media types)."""
    token = token_create(user=editor)
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    modern, modern_headers = _modern("tools/list", {})
    answers = {
        "no token": _post(live_server, None, listed),
        "bad token": _post(live_server, "mc_not-a-token", listed),
        "foreign host": _post(live_server, token, listed, Host="evil.example"),
        "bad JSON": _post(live_server, token, b'{"jsonrpc": '),
        "not JSON-RPC": _post(live_server, token, {"hello": "world"}),
        "SSE only": _post(live_server, token, listed, Accept="text/event-stream"),
        "form": _post(live_server, token, listed, **{"Content-Type": "text/plain"}),
        "modern SSE only": _post(live_server, token, modern,
                                 **{**modern_headers, "Accept": "text/event-stream"}),
    }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {"no token": 401, "bad token": 401, "foreign host": 400,
                        "bad JSON": 400, "not JSON-RPC": 400, "SSE only": 406, "form": 400,
                        "modern SSE only": 406}
    for name, answer in answers.items():
        assert answer.headers["Content-Type"].startswith("application/json"), name
        assert "error" in answer.json(), name


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE", "PUT", "PATCH", "OPTIONS"])
def test_http_answers_every_method_but_post_405_at_once(live_server, viewer, method):
    """A stateless server offers no SSE stream to GET (the spec allows a 405): a GET used to
    be that stream, holding its web thread for as long as the client stayed, and nine of
    them took a gunicorn down."""
    import httpx

    token = token_create(user=viewer)
    started = time.monotonic()
    answer = httpx.request(method, f"{live_server.url}/mcp", timeout=10,
                           headers={"Authorization": f"Bearer {token}", "Accept": "*/*"})
    assert time.monotonic() - started < 5
    assert answer.status_code == 405 and answer.headers["Allow"] == "POST"
    if method != "HEAD":
        assert answer.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.django_db(transaction=True)
def test_http_opens_no_listen_stream(live_server, viewer):
    """``subscriptions/listen`` (a POST whose answer is a stream as long as its client) is not
    served: it used to hold its thread for good, as a GET did."""
    token = token_create(user=viewer)
    body, headers = _modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    answer = _post(live_server, token, body, **headers)
    assert answer.json()["error"]["message"] == "Method not found"
    listed, headers = _modern("tools/list", {})
    assert {t["name"] for t in _post(live_server, token, listed, **headers)
            .json()["result"]["tools"]} >= TOOLS


def test_the_bridge_ends_a_stream_at_its_deadline():
    """Whatever the SDK streams, the bridge's client leaves at the deadline and the stream
    ends with what it sent: the SDK's own server, which serves ``subscriptions/listen`` and a
    GET stream, over ``bridge.serve_http`` with a 1 s deadline."""
    import threading

    from django.test import RequestFactory
    from mcp.server.mcpserver import MCPServer

    from integrations.mcp.bridge import serve_http

    streaming = MCPServer("streaming")  # subscriptions served: the SDK's default
    body, headers = _modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    factory = RequestFactory(HTTP_HOST="localhost")
    requests = {
        "listen": factory.post("/mcp", json.dumps(body), content_type="application/json",
                               HTTP_ACCEPT="application/json, text/event-stream",
                               HTTP_MCP_PROTOCOL_VERSION=headers["MCP-Protocol-Version"],
                               HTTP_MCP_METHOD=headers["MCP-Method"]),
        "GET": factory.get("/mcp", HTTP_ACCEPT="text/event-stream"),
    }
    replies, took = {}, {}

    def serve(name):
        started = time.monotonic()
        replies[name] = serve_http(streaming, requests[name], deadline=1.0)
        took[name] = time.monotonic() - started

    # Daemon threads: a stream the bridge failed to end fails this test instead of hanging it.
    threads = [threading.Thread(target=serve, args=(name,), daemon=True) for name in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=15)
    assert set(replies) == set(requests), "a stream outlived the deadline"
    for name, reply in replies.items():
        assert 1.0 <= took[name] < 5, (name, took[name])
        assert reply.status == 200 and ("content-type", "text/event-stream") in reply.headers
    assert b"notifications/subscriptions/acknowledged" in replies["listen"].body


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("host", ["[::1]", "[::1]:8802", "127.0.0.1", "127.0.0.1:8802",
                                  "localhost", "localhost:8802"])
def test_http_serves_every_form_of_host_header(live_server, editor, host):
    """An IPv6 literal (with or without a port) used to be a 500: the port was cut at the
    first colon. The SDK's own client, sending that Host."""
    token = token_create(user=editor)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", "Host": host},
                              timeout=httpx2.Timeout(30.0))
    client = Client(streamable_http_client(f"{live_server.url}/mcp", http_client=http))

    async def steps(client):
        return await client.call_tool("add_memory", {"user_id": "alice", "content": host})

    assert run(client, steps).structured_content["content"] == host
    assert Memory.objects.get().content == host
