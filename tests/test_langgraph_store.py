"""MemoryConsoleStore (clients/python, extra [langgraph]) against a live server, driven
through real LangGraph graphs (StateGraph compiled with ``store=``) and through the
BaseStore methods LangGraph's own nodes and tools call."""

import asyncio
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import InvalidNamespaceError
from memory_console_client import Forbidden, MemoryConsole
from memory_console_client.langgraph_store import MemoryConsoleStore

from tests.test_client import FAST, make_token

pytestmark = pytest.mark.usefixtures("empty_queues")


@pytest.fixture
def token(live_server, builtins):
    return make_token("lg-editor", "editor")


@pytest.fixture
def store(live_server, token):
    s = MemoryConsoleStore(live_server.url, token, retry=FAST)
    yield s
    s.close()


class State(TypedDict, total=False):
    user_id: str
    fact: str
    question: str
    found: list[str]
    after_forget: list[str]
    city: str
    answer: list[str]


def remember(state: State, runtime: Runtime) -> State:
    runtime.store.put((state["user_id"],), "drink", {"content": state["fact"], "topic": "food"})
    return {}


def recall(state: State, runtime: Runtime) -> State:
    items = runtime.store.search((state["user_id"],), query=state["question"],
                                 filter={"topic": "food"}, limit=3)
    return {"found": [i.value["content"] for i in items]}


def forget(state: State, runtime: Runtime) -> State:
    runtime.store.delete((state["user_id"],), "drink")
    items = runtime.store.search((state["user_id"],), query=state["question"])
    return {"after_forget": [i.key for i in items]}


async def aremember(state: State, runtime: Runtime) -> State:
    await runtime.store.aput((state["user_id"],), "drink", {"content": state["fact"]})
    return {}


async def arecall(state: State, runtime: Runtime) -> State:
    items = await runtime.store.asearch((state["user_id"],), query=state["question"])
    return {"found": [i.value["content"] for i in items]}


async def aforget(state: State, runtime: Runtime) -> State:
    await runtime.store.adelete((state["user_id"],), "drink")
    items = await runtime.store.asearch((state["user_id"],), query=state["question"])
    return {"after_forget": [i.key for i in items]}


def graph(store, *nodes):
    builder = StateGraph(State)
    names = [n.__name__ for n in nodes]
    for node in nodes:
        builder.add_node(node.__name__, node)
    for a, b in zip([START, *names], [*names, END], strict=True):
        builder.add_edge(a, b)
    return builder.compile(store=store)


def test_a_graph_remembers_recalls_and_forgets(store, live_server, token):
    out = graph(store, remember, recall, forget).invoke(
        {"user_id": "alice", "fact": "Alice drinks green tea every morning",
         "question": "what does alice drink in the morning?"})
    assert out["found"] == ["Alice drinks green tea every morning"]
    assert out["after_forget"] == []

    # The graph's memory is a real memory: visible to the API, forgotten (soft) at the end.
    client = MemoryConsole(live_server.url, token)
    forgotten = client.list_memories("alice", include_forgotten=True).items
    assert [m.content for m in forgotten] == ["Alice drinks green tea every morning"]
    assert forgotten[0].deleted_at is not None and forgotten[0].source == "langgraph"


def test_an_async_graph_does_the_same_through_abatch(store):
    async def run():
        return await graph(store, aremember, arecall, aforget).ainvoke(
            {"user_id": "bo", "fact": "Bo keeps the spare key under the blue pot",
             "question": "where is the spare key?"})

    out = asyncio.run(run())
    assert out["found"] == ["Bo keeps the spare key under the blue pot"]
    assert out["after_forget"] == []


def test_get_returns_the_value_put_and_a_second_put_supersedes_it(store, live_server, token):
    value = {"content": "Carol's desk is 4B", "floor": 4, "tags": ["office"]}
    store.put(("carol", "onboarding"), "desk", value)
    item = store.get(("carol", "onboarding"), "desk")
    assert item.value == value and item.key == "desk"
    assert item.namespace == ("carol", "onboarding")
    assert store.get(("carol",), "desk") is None  # user-wide is another namespace

    store.put(("carol", "onboarding"), "desk", {"content": "Carol's desk is 5A", "floor": 5})
    again = store.get(("carol", "onboarding"), "desk")
    assert again.value["floor"] == 5
    client = MemoryConsole(live_server.url, token)
    new, old = client.list_memories("carol", conversation_id="onboarding").items
    assert new.content == "Carol's desk is 5A" and new.holds
    assert old.content == "Carol's desk is 4B" and old.superseded_by == new.memory_id
    assert new.supersedes == [old.memory_id] and old.valid_until == new.valid_from

    # The same text with other fields changed is a new version of the same memory.
    store.put(("carol", "onboarding"), "desk", {"content": "Carol's desk is 5A", "floor": 6})
    assert store.get(("carol", "onboarding"), "desk").value["floor"] == 6
    assert client.get_memory(new.memory_id).version == 2
    assert len(client.list_memories("carol", conversation_id="onboarding").items) == 2


def test_search_without_query_filters_values_with_langgraph_operators(store):
    for n in range(5):
        store.put(("dave",), f"k{n}", {"content": f"note number {n}", "n": n})
    items = store.search(("dave",), filter={"n": {"$gte": 2}}, limit=10)
    assert sorted(i.value["n"] for i in items) == [2, 3, 4]
    assert len(store.search(("dave",), limit=2, offset=1)) == 2


def test_search_in_a_conversation_stays_in_it(store):
    store.put(("erin", "trip"), "hotel", {"content": "The hotel in Lisbon is near the river"})
    store.put(("erin",), "home", {"content": "Erin's home is near the river too"})
    in_trip = store.search(("erin", "trip"), query="near the river")
    assert [(i.namespace, i.key) for i in in_trip] == [(("erin", "trip"), "hotel")]
    everywhere = store.search(("erin",), query="near the river")
    assert {i.key for i in everywhere} == {"hotel", "home"}
    assert all(i.score and i.score > 0 for i in everywhere)


def test_memories_written_by_other_means_are_items_keyed_by_id(store, live_server, token):
    client = MemoryConsole(live_server.url, token)
    made = client.remember("fay", "Fay's cat is called Miso")
    [item] = store.search(("fay",), query="cat called")
    assert item.key == made.memory_id and item.value["content"] == "Fay's cat is called Miso"
    assert store.get(("fay",), made.memory_id).value["content"] == "Fay's cat is called Miso"


def test_two_keys_with_the_same_text_stay_two_items(store):
    store.put(("gus",), "a", {"content": "same words"})
    store.put(("gus",), "b", {"content": "same words"})
    assert store.get(("gus",), "a").value == store.get(("gus",), "b").value
    store.delete(("gus",), "a")
    assert store.get(("gus",), "a") is None and store.get(("gus",), "b") is not None


def test_ttl_minutes_become_a_short_term_memory(store, live_server, token):
    store.put(("hal",), "otp", {"content": "Hal's one-time code is 991"}, ttl=2)
    client = MemoryConsole(live_server.url, token)
    [memory] = client.list_memories("hal").items
    assert memory.type == "short_term"
    seconds = (memory.expire_at - memory.created_at).total_seconds()
    assert 119 <= seconds <= 121
    assert store.get(("hal",), "otp").value["content"] == "Hal's one-time code is 991"


def test_list_namespaces_with_prefix_suffix_and_depth(store):
    store.put(("ivy",), "a", {"content": "ivy user-wide"})
    store.put(("ivy", "c1"), "b", {"content": "ivy in c1"})
    store.put(("jon", "c1"), "c", {"content": "jon in c1"})
    assert store.list_namespaces() == [("ivy",), ("ivy", "c1"), ("jon", "c1")]
    assert store.list_namespaces(prefix=("ivy",)) == [("ivy",), ("ivy", "c1")]
    assert store.list_namespaces(suffix=("c1",)) == [("ivy", "c1"), ("jon", "c1")]
    assert store.list_namespaces(max_depth=1) == [("ivy",), ("jon",)]
    assert store.list_namespaces(limit=1, offset=1) == [("ivy", "c1")]


def test_bad_namespaces_and_foreign_namespaces_are_refused(store, live_server):
    with pytest.raises(InvalidNamespaceError):
        store.put(("a", "b", "c"), "k", {"content": "too deep"})
    with pytest.raises(InvalidNamespaceError):
        store.search((), query="anything")
    restricted = MemoryConsoleStore(live_server.url, make_token("lg-kim", "editor", "kim"),
                                    retry=FAST)
    restricted.put(("kim",), "k", {"content": "kim's own"})
    with pytest.raises(Forbidden):
        restricted.put(("lee",), "k", {"content": "not kim's"})


def move(state: State, runtime: Runtime) -> State:
    runtime.store.put((state["user_id"],), "home",
                      {"content": f"{state['user_id'].title()} lives in {state['city']}"})
    return {}


def where(state: State, runtime: Runtime) -> State:
    items = runtime.store.search((state["user_id"],), query="where does she live")
    current = runtime.store.get((state["user_id"],), "home")
    return {"answer": [i.value["content"] for i in items] + [current.value["content"]]}


def test_a_graph_that_moves_keeps_the_old_home_as_superseded(store, live_server, token):
    app = graph(store, move, where)
    first = app.invoke({"user_id": "alice", "city": "Porto"})
    assert first["answer"] == ["Alice lives in Porto", "Alice lives in Porto"]
    then = app.invoke({"user_id": "alice", "city": "Madrid"})
    # search and get answer the current fact only
    assert then["answer"] == ["Alice lives in Madrid", "Alice lives in Madrid"]
    assert [i.value["content"] for i in store.search(("alice",))] == ["Alice lives in Madrid"]

    # the old fact is kept, superseded, and readable as history
    client = MemoryConsole(live_server.url, token)
    history = client.list_memories("alice", metadata={"langgraph.key": "home"}).items
    assert [(m.content, m.holds) for m in history] == [("Alice lives in Madrid", True),
                                                       ("Alice lives in Porto", False)]
    madrid, porto = history
    assert porto.superseded_by == madrid.memory_id and porto.deleted_at is None
    both = client.recall("alice", "where does she live", include_superseded=True)
    assert {h.memory_id for h in both.results} == {madrid.memory_id, porto.memory_id}
    as_of = client.recall("alice", "where does she live", as_of=porto.valid_from)
    assert [h.memory_id for h in as_of.results] == [porto.memory_id]

    # putting the earlier value back makes that memory hold again
    back = app.invoke({"user_id": "alice", "city": "Porto"})
    assert back["answer"] == ["Alice lives in Porto", "Alice lives in Porto"]
    porto_now = client.get_memory(porto.memory_id)
    assert porto_now.holds and client.get_memory(madrid.memory_id).superseded_by == \
        porto.memory_id
    assert len(client.list_memories("alice").items) == 2
    again = app.invoke({"user_id": "alice", "city": "Madrid"})
    assert again["answer"] == ["Alice lives in Madrid", "Alice lives in Madrid"]


def test_an_ended_fact_leaves_get_and_search(store, live_server, token):
    store.put(("max",), "team", {"content": "Max is on the payments team"})
    client = MemoryConsole(live_server.url, token)
    [memory] = client.list_memories("max").items
    client.invalidate(memory.memory_id, "moved teams")
    assert store.get(("max",), "team") is None
    assert store.search(("max",), query="payments team") == []
    assert store.search(("max",)) == []
    store.put(("max",), "team", {"content": "Max is on the search team"})
    assert store.get(("max",), "team").value["content"] == "Max is on the search team"


def test_an_async_put_supersedes_too(store, live_server, token):
    async def run():
        await store.aput(("nia",), "home", {"content": "Nia lives in Porto"})
        await store.aput(("nia",), "home", {"content": "Nia lives in Madrid"})
        found = await store.asearch(("nia",), query="where does Nia live")
        return (await store.aget(("nia",), "home")).value, [i.value for i in found]

    current, found = asyncio.run(run())
    assert current == {"content": "Nia lives in Madrid"} and found == [current]
    madrid, porto = MemoryConsole(live_server.url, token).list_memories("nia").items
    assert porto.superseded_by == madrid.memory_id
