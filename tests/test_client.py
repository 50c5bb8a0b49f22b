"""The Python client (clients/python) against a live server: the real HTTP stack, the real
database and Redis. Retry behaviour is pinned against a small local HTTP server that answers
503 on purpose (a real socket, nothing mocked)."""

import asyncio
import io
import json
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from memory_console_client import (
    AsyncMemoryConsole,
    BadRequest,
    Conflict,
    Forbidden,
    MemoryConsole,
    NotFound,
    RetryPolicy,
    TransportError,
    Unauthorized,
    Unavailable,
)

pytestmark = pytest.mark.usefixtures("empty_queues")

FAST = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.02)


def make_token(username: str, role: str, *namespaces: str) -> str:
    """A bearer token made the way users make one (the command's last line)."""
    out = io.StringIO()
    args = [username, "--role", role]
    for ns in namespaces:
        args += ["--namespace", ns]
    call_command("create_api_token", *args, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


@pytest.fixture
def client(live_server, builtins):
    with MemoryConsole(live_server.url, make_token("cli-editor", "editor"), retry=FAST) as c:
        yield c


def test_it_remembers_recalls_and_forgets(client):
    made = client.remember("alice", "Alice prefers green tea over coffee in the morning",
                           tags=["drinks"], metadata={"source_turn": 3})
    assert made.memory_id.startswith("mem_") and made.version == 1
    assert made.deduplicated is False and made.created_at is not None

    found = client.recall("alice", "what does alice drink in the morning?")
    assert [h.memory_id for h in found.results] == [made.memory_id]
    hit = found.results[0]
    assert hit.score > 0 and hit.explain.bm25 > 0
    assert hit.explain.terms and all(v > 0 for v in hit.explain.terms.values())
    assert hit.metadata == {"source_turn": 3}

    again = client.remember("alice", "Alice prefers green tea over coffee in the morning")
    assert again.deduplicated is True and again.memory_id == made.memory_id

    client.forget(made.memory_id, reason="user asked")
    assert client.recall("alice", "green tea").results == []
    gone = client.get_memory(made.memory_id)
    assert gone.deleted_at is not None
    kinds = [v.kind for v in client.history(made.memory_id)]
    assert kinds == ["create", "forget"]
    assert client.restore(made.memory_id).deleted_at is None


def test_it_updates_with_optimistic_locking(client):
    made = client.remember("bob", "Bob's desk is on the third floor")
    edited = client.update_memory(made.memory_id, content="Bob's desk is on the fourth floor",
                                  version=1, reason="moved")
    assert edited.version == 2 and "fourth" in edited.content
    with pytest.raises(Conflict) as stale:
        client.update_memory(made.memory_id, importance=0.9, version=1)
    assert stale.value.status == 409 and stale.value.current_version == 2


def test_errors_carry_code_field_and_status(live_server, client, builtins):
    with pytest.raises(BadRequest) as bad:
        client.remember("alice", "x", type="forever")
    assert bad.value.status == 400 and bad.value.field == "type" and bad.value.code == "invalid"

    with pytest.raises(NotFound) as missing:
        client.get_memory("mem_0000000000000000")
    assert missing.value.code == "not_found" and missing.value.field == "memory_id"
    with pytest.raises(NotFound):
        client.get_memory("../../etc/passwd")  # any format is a 404, and the path is quoted

    viewer = MemoryConsole(live_server.url, make_token("cli-viewer", "viewer"), retry=FAST)
    with pytest.raises(Forbidden) as refused:
        viewer.remember("alice", "viewers cannot write")
    assert refused.value.status == 403

    with pytest.raises(Unauthorized):
        MemoryConsole(live_server.url, "not-a-token").recall("alice", "tea")


def test_it_speaks_sessions_and_context(client):
    session = client.create_session("carol", session_id="trip:2026 paris", agent_id="planner")
    assert session.session_id == "trip:2026 paris"
    appended = client.append(session.session_id, [
        {"role": "user", "content": "Book the train to Paris for Friday"},
        {"role": "assistant", "content": "Booked the 9:10 train to Paris"},
    ])
    assert appended.length == 2
    ctx = client.context(session.session_id, last=10)
    assert [m.role for m in ctx.messages] == ["user", "assistant"] and ctx.total == 2
    assert client.get_session(session.session_id).total == 2
    listed = client.list_sessions("carol")
    assert [s.session_id for s in listed.items] == ["trip:2026 paris"]
    promoted = client.promote_message(session.session_id, 1, reason="keep it")
    assert promoted.type == "long_term" and promoted.conversation_id is None
    client.delete_session(session.session_id)
    with pytest.raises(NotFound):
        client.get_session(session.session_id)


def test_the_async_client_completes_the_round_trip(live_server, builtins):
    token = make_token("cli-async", "editor")

    async def round_trip():
        async with AsyncMemoryConsole(live_server.url, token, retry=FAST) as c:
            made = await c.remember("dora", "Dora keeps the spare office key in the red box")
            found = await c.recall("dora", "where is the spare key?")
            assert [h.memory_id for h in found.results] == [made.memory_id]
            await c.forget(made.memory_id)
            assert (await c.recall("dora", "spare key")).results == []
            analysis = await c.analyze("The spare keys")
            assert "spare" in analysis.tokens
            return made.memory_id

    assert asyncio.run(round_trip()).startswith("mem_")


# Retries, against a local server that answers what each test scripts ------------------------


class Scripted:
    """A real HTTP server on a free loopback port answering the scripted (status, body)
    pairs in order (the last one repeats); it records each request's method and path."""

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                scripted.seen.append((self.command, self.path))
                status, body = (scripted.replies.pop(0) if len(scripted.replies) > 1
                                else scripted.replies[0])
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PATCH = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


UNAVAILABLE = (503, {"error": {"code": "unavailable", "message": "Redis is unreachable",
                               "field": None}})
RECALL_OK = (200, {"results": [], "match_mode_used": "any", "profile": "bm25", "took_ms": 0.4})


@pytest.fixture
def scripted():
    servers = []

    def start(*replies):
        servers.append(Scripted(replies))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_idempotent_calls_retry_on_503_then_succeed(scripted):
    server = scripted(UNAVAILABLE, UNAVAILABLE, RECALL_OK)
    result = MemoryConsole(server.url, "t", retry=FAST).recall("alice", "tea")
    assert result.profile == "bm25"
    assert server.seen == [("POST", "/api/v1/recall")] * 3


def test_retries_stop_after_the_policy_attempts(scripted):
    server = scripted(UNAVAILABLE)
    with pytest.raises(Unavailable) as exc:
        MemoryConsole(server.url, "t", retry=FAST).get_memory("mem_0123456789abcdef")
    assert exc.value.code == "unavailable" and len(server.seen) == 3


def test_creates_are_never_retried(scripted):
    server = scripted(UNAVAILABLE, (201, {"memory_id": "mem_0123456789abcdef"}))
    with pytest.raises(Unavailable):
        MemoryConsole(server.url, "t", retry=FAST).remember("alice", "tea")
    assert server.seen == [("POST", "/api/v1/memories")]


def test_connection_errors_retry_then_raise_transport_error(scripted):
    server = scripted(RECALL_OK)
    url = server.url
    server.close()  # nothing listens there any more: connection refused
    client = MemoryConsole(url, "t", retry=FAST, timeout=2)
    with pytest.raises(TransportError) as exc:
        client.recall("alice", "tea")
    assert exc.value.__cause__ is not None


def test_the_async_client_retries_too(scripted):
    server = scripted(UNAVAILABLE, RECALL_OK)

    async def go():
        async with AsyncMemoryConsole(server.url, "t", retry=FAST) as c:
            return await c.recall("alice", "tea")

    assert asyncio.run(go()).took_ms == 0.4 and len(server.seen) == 2


def test_retry_after_is_honoured_within_the_cap():
    import httpx

    policy = RetryPolicy(attempts=3, backoff=1.0, max_backoff=2.0)
    assert policy.delay(0, httpx.Response(503, headers={"Retry-After": "1.5"})) == 1.5
    assert policy.delay(0, httpx.Response(503, headers={"Retry-After": "60"})) == 2.0
    assert 0 <= policy.delay(5, None) <= 2.0


def test_paginate_follows_next_cursor_and_refuses_a_loop(scripted):
    server = scripted(
        (200, {"sessions": [{"session_id": "a", "updated_at": "2026-01-01T00:00:00+00:00"}],
               "next_cursor": "c1"}),
        (200, {"sessions": [{"session_id": "b", "updated_at": "2026-01-01T00:00:00+00:00"}],
               "next_cursor": None}),
    )
    client = MemoryConsole(server.url, "t", retry=FAST)
    ids = [s.session_id for s in client.paginate(client.list_sessions, user_id="u", limit=1)]
    assert ids == ["a", "b"]
    assert server.seen == [("GET", "/api/v1/sessions?user_id=u&limit=1"),
                           ("GET", "/api/v1/sessions?user_id=u&cursor=c1&limit=1")]

    looping = scripted((200, {"sessions": [], "next_cursor": "same"}))
    client = MemoryConsole(looping.url, "t", retry=FAST)
    with pytest.raises(Exception, match="twice"):
        list(client.paginate(client.list_sessions, user_id="u"))


def test_paginate_walks_every_memory_of_a_namespace(client):
    made = [client.remember("pia", f"Pia's note number {n}") for n in range(7)]
    first = client.list_memories("pia", limit=3)
    assert len(first.items) == 3 and first.next_cursor
    walked = [m.memory_id for m in client.paginate(client.list_memories, user_id="pia",
                                                   limit=3)]
    assert sorted(walked) == sorted(m.memory_id for m in made) and len(set(walked)) == 7
    namespaces = list(client.paginate(client.list_namespaces, limit=1))
    assert [(n.user_id, n.conversation_id, n.memories) for n in namespaces] == [
        ("pia", None, 7)]
    with pytest.raises(BadRequest) as bad:
        client.list_memories("pia", cursor="not-a-cursor")
    assert bad.value.field == "cursor"


def test_facts_over_time_madrid_now_porto_as_of_july(client):
    porto = client.remember("alice", "Alice lives in Porto, near the river.",
                            valid_from="2026-06-01T00:00:00Z", supersession="off")
    madrid = client.remember("alice", "Alice moved to Madrid; she no longer lives in Porto.",
                             valid_from=datetime(2026, 8, 1, tzinfo=UTC),
                             supersedes=[porto.memory_id], supersession="off")
    assert madrid.supersedes == [porto.memory_id] and madrid.holds
    assert madrid.valid_from == datetime(2026, 8, 1, tzinfo=UTC)
    old = client.get_memory(porto.memory_id)
    assert old.superseded_by == madrid.memory_id and old.valid_until == madrid.valid_from
    assert not old.holds and old.content.startswith("Alice lives in Porto")

    now = client.recall("alice", "where does Alice live")
    assert [h.memory_id for h in now.results] == [madrid.memory_id]
    july = client.recall("alice", "where does Alice live", as_of=datetime(2026, 7, 15, tzinfo=UTC))
    assert [h.memory_id for h in july.results] == [porto.memory_id]
    assert july.results[0].superseded_by == madrid.memory_id
    assert client.recall("alice", "where does Alice live",
                         as_of="2026-07-15T00:00:00Z").results[0].memory_id == porto.memory_id
    both = client.recall("alice", "where does Alice live", include_superseded=True)
    by_id = {h.memory_id: h for h in both.results}
    assert set(by_id) == {porto.memory_id, madrid.memory_id}
    assert by_id[porto.memory_id].explain.validity.startswith(
        f"superseded by {madrid.memory_id} since ")

    with pytest.raises(NotFound) as unknown:
        client.update(madrid.memory_id, supersedes=["mem_0000000000000000"])
    assert unknown.value.field == "supersedes"
    with pytest.raises(BadRequest) as bad:
        client.recall("alice", "where", as_of="last July")
    assert bad.value.field == "as_of"


def test_invalidate_revalidate_and_the_review_queue(client):
    fact = client.remember("bob", "Bob is the on-call engineer for billing.",
                           supersession="off")
    ended = client.invalidate(fact.memory_id, "rotation ended")
    assert ended.valid_until is not None and not ended.holds
    assert client.recall("bob", "on-call billing").results == []
    with pytest.raises(Conflict) as twice:
        client.invalidate(fact.memory_id, "again")
    assert twice.value.field == "memory_id"
    back = client.revalidate(fact.memory_id, "rotation extended")
    assert back.valid_until is None and back.holds
    assert [h.memory_id for h in client.recall("bob", "on-call billing").results] == [
        fact.memory_id]

    porto = client.remember("carol", "Carol lives in Porto.")
    madrid = client.remember("carol", "Carol moved to Madrid.", supersession="propose")
    [proposal] = client.conflicts("carol").items
    assert (proposal.newer, proposal.older, proposal.status) == (
        madrid.memory_id, porto.memory_id, "open")
    accepted = client.accept_conflict(proposal.id, reason="checked with Carol")
    assert accepted.status == "accepted" and accepted.decision_reason == "checked with Carol"
    assert client.get_memory(porto.memory_id).superseded_by == madrid.memory_id
    assert client.conflicts("carol").items == []
    assert [c.id for c in client.conflicts(status="accepted").items] == [proposal.id]
    rejected = client.reject_conflict(proposal.id)
    assert rejected.status == "rejected" and client.get_memory(porto.memory_id).holds


def test_the_async_client_reads_facts_as_of(live_server, builtins):
    token = make_token("cli-async-facts", "editor")

    async def go():
        async with AsyncMemoryConsole(live_server.url, token, retry=FAST) as c:
            porto = await c.remember("dora", "Dora lives in Porto.",
                                     valid_from="2026-06-01T00:00:00Z", supersession="off")
            await c.remember("dora", "Dora lives in Madrid.", valid_from="2026-08-01T00:00:00Z",
                             supersedes=[porto.memory_id], supersession="off")
            july = await c.recall("dora", "where does Dora live", as_of="2026-07-15T00:00:00Z")
            return porto.memory_id, [h.memory_id for h in july.results]

    porto_id, july = asyncio.run(go())
    assert july == [porto_id]
