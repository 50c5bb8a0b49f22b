"""The recall log through the Python client (sync and async) and the LangGraph store, against
a live server: a recall's ``recall_id`` reads back as a trace under the interface the client
names in ``X-Memory-Client`` (python, langgraph), the list filters and pages, and feedback
is recorded per actor with its errors."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from memory_console_client import (
    AsyncMemoryConsole,
    BadRequest,
    Feedback,
    MemoryConsole,
    NotFound,
    RecallTrace,
)
from memory_console_client.langgraph_store import MemoryConsoleStore

from tests.test_client import FAST, make_token

pytestmark = pytest.mark.usefixtures("empty_queues")


@pytest.fixture
def token(live_server, builtins):
    return make_token("rl-editor", "editor")


@pytest.fixture
def client(live_server, token):
    with MemoryConsole(live_server.url, token, retry=FAST) as c:
        yield c


def test_a_recall_by_the_client_is_traced_under_python_and_reads_back(client):
    made = client.remember("ada", "Ada keeps her bicycle in the courtyard shed")
    found = client.recall("ada", "where is the bicycle?", limit=3)
    assert found.recall_id and found.recall_id.startswith("rc_")

    trace = client.get_recall(found.recall_id)
    assert isinstance(trace, RecallTrace)
    assert (trace.id, trace.user_id, trace.interface, trace.actor) == (
        found.recall_id, "ada", "python", "rl-editor")
    assert trace.query == "where is the bicycle?" and trace.profile == found.profile
    assert [(r.memory_id, r.rank) for r in trace.results] == [(made.memory_id, 1)]
    assert trace.at.tzinfo is not None and trace.feedback == []


def test_the_list_filters_by_interface_and_words_and_pages(client):
    client.remember("ada", "Ada plays the cello on Sundays")
    ids = [client.recall("ada", q).recall_id for q in ("cello", "Sundays cello", "piano")]
    page = client.recalls("ada", limit=2)
    assert [t.id for t in page.items] == ids[::-1][:2] and page.next_cursor
    rest = client.recalls("ada", limit=2, cursor=page.next_cursor)
    assert [t.id for t in rest.items] == [ids[0]] and rest.next_cursor is None
    assert [t.id for t in client.paginate(client.recalls, user_id="ada", limit=1)] == ids[::-1]

    assert [t.id for t in client.recalls("ada", q="cello").items] == [ids[1], ids[0]]
    assert client.recalls("ada", interface="mcp").items == []
    assert len(client.recalls("ada", interface="python", actor="rl-editor").items) == 3
    later = datetime.now(UTC) + timedelta(hours=1)
    assert client.recalls("ada", since=later).items == []
    assert len(client.recalls("ada", until=later).items) == 3
    with pytest.raises(BadRequest) as bad:
        client.recalls("ada", interface="carrier-pigeon")
    assert bad.value.field == "interface"


def test_feedback_is_recorded_replaced_and_refused_with_reasons(client, live_server):
    kept = client.remember("ada", "Ada's locker code is 4471")
    other = client.remember("ada", "Ada's bank is in the old town")
    found = client.recall("ada", "locker code")
    assert [h.memory_id for h in found.results] == [kept.memory_id]

    given = client.recall_feedback(found.recall_id, kept.memory_id, grade=2, note="close")
    assert isinstance(given, Feedback)
    assert (given.recall_id, given.memory_id, given.grade, given.note, given.actor) == (
        found.recall_id, kept.memory_id, 2, "close", "rl-editor")
    again = client.recall_feedback(found.recall_id, kept.memory_id, useful=True)
    assert again.id == given.id and again.grade == 3 and again.note == ""
    with MemoryConsole(live_server.url, make_token("rl-viewer", "viewer"), retry=FAST) as viewer:
        theirs = viewer.recall_feedback(found.recall_id, kept.memory_id, useful=False,
                                        note="stale")
    assert theirs.grade == 0 and theirs.id != given.id
    assert sorted((f.actor, f.grade) for f in client.get_recall(found.recall_id).feedback) == [
        ("rl-editor", 3), ("rl-viewer", 0)]

    with pytest.raises(BadRequest) as not_a_result:
        client.recall_feedback(found.recall_id, other.memory_id, grade=1)
    assert not_a_result.value.field == "memory_id"
    with pytest.raises(BadRequest) as both:
        client.recall_feedback(found.recall_id, kept.memory_id, grade=1, useful=True)
    assert both.value.field == "grade"
    with pytest.raises(BadRequest):
        client.recall_feedback(found.recall_id, kept.memory_id)
    with pytest.raises(NotFound):
        client.recall_feedback("rc_0000000000000000", kept.memory_id, grade=1)
    with pytest.raises(NotFound):
        client.get_recall("rc_0000000000000000")


def test_the_async_client_does_the_same(live_server, token):
    async def run():
        async with AsyncMemoryConsole(live_server.url, token, retry=FAST) as c:
            made = await c.remember("ada", "Ada waters the fern on Fridays")
            found = await c.recall("ada", "fern")
            trace = await c.get_recall(found.recall_id)
            given = await c.recall_feedback(found.recall_id, made.memory_id, grade=1)
            listed = [t.id async for t in c.paginate(c.recalls, user_id="ada", limit=1)]
            return found, trace, given, listed

    found, trace, given, listed = asyncio.run(run())
    assert trace.interface == "python" and trace.results[0].memory_id == given.memory_id
    assert given.grade == 1 and listed == [found.recall_id]


def test_the_langgraph_store_names_itself_langgraph(live_server, token, client):
    store = MemoryConsoleStore(live_server.url, token, retry=FAST)
    try:
        store.put(("ada",), "tea", {"content": "Ada drinks rooibos after dinner"})
        assert [i.key for i in store.search(("ada",), query="rooibos")] == ["tea"]

        async def asearch():
            return await store.asearch(("ada",), query="rooibos after dinner")

        assert len(asyncio.run(asearch())) == 1
    finally:
        store.close()
    traces = client.recalls("ada", interface="langgraph").items
    assert [t.query for t in traces] == ["rooibos after dinner", "rooibos"]
    assert all(t.actor == "rl-editor" for t in traces)
    assert client.recalls("ada", interface="python").items == []
