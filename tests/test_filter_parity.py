"""One set of filters everywhere: every reading interface answers the same memory ids for the
same filter cases: REST recall (``POST /api/v1/recall``) and ``GET /api/v1/memories`` over
HTTP, MCP ``search_memories`` and ``list_memories`` through the ``mcp`` SDK's client
(Streamable HTTP), the Python client's ``recall`` and ``list_memories`` and the LangGraph
store's ``search``, all against the live server. The agent scope (``agent_id``, ``run_id``)
is written through each interface's create and read back in every shape."""

import datetime as dt

import anyio
import httpx
import pytest
from memory_console_client import MemoryConsole
from memory_console_client.langgraph_store import MemoryConsoleStore

from accounts.tokens import token_create
from tests.conftest import work
from tests.helpers import create
from tests.test_client import FAST
from tests.test_mcp import http_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_queues")]

NS = "acme"
UTC = dt.UTC


def _at(day: int, month: int = 3) -> dt.datetime:
    return dt.datetime(2025, month, day, 9, 0, tzinfo=UTC)


@pytest.fixture
def memories(builtins):
    """Six memories of namespace ``acme``: two of the planner (runs r1, r2), one of the
    researcher, one without an agent, and an archivist's fact superseded on 20 March."""
    m1 = create("Planner booked the Lisbon flight", NS, agent_id="planner", run_id="r1",
                author="ana", tags=["travel"], metadata={"project": {"name": "apollo"}},
                created_at=_at(1))
    m2 = create("Planner chose the hotel near the river", NS, agent_id="planner",
                run_id="r2", author="bob", tags=["travel", "hotel"],
                metadata={"project": {"name": "apollo"}}, created_at=_at(5))
    m3 = create("Researcher found the museum opening hours", NS, agent_id="researcher",
                run_id="r3", author="ana", tags=["culture"],
                metadata={"project": {"name": "zeus"}}, created_at=_at(10))
    m4 = create("User prefers window seats on flights", NS, tags=["travel"],
                created_at=_at(15))
    m5 = create("Archivist noted the flight leaves at nine", NS, agent_id="archivist",
                author="carl", created_at=_at(1, month=2))
    m6 = create("Archivist noted the flight leaves at eleven", NS, agent_id="archivist",
                author="carl", created_at=_at(20), valid_from=_at(20),
                supersedes=[m5.memory_id], supersession="off")
    work()
    return {f"m{n}": m.memory_id for n, m in enumerate([m1, m2, m3, m4, m5, m6], start=1)}


# (filters, expected ids newest first). An empty query: every interface lists the matches.
# The archivist's superseded fact is named only with a moment (as_of / now): a list keeps
# every fact unless given one, recall the facts valid now.
LIST_CASES = [
    ({"agent_id": "planner"}, ["m2", "m1"]),
    ({"run_id": "r1"}, ["m1"]),
    ({"author": "ana"}, ["m3", "m1"]),
    ({"tags": ["travel"]}, ["m4", "m2", "m1"]),
    ({"tags": ["travel", "hotel"]}, ["m2"]),
    ({"since": "2025-03-05T09:00:00+00:00", "until": "2025-03-15T09:00:00Z"}, ["m3", "m2"]),
    ({"since": _at(2), "author": "ana"}, ["m3"]),
    ({"metadata": {"project.name": "apollo"}}, ["m2", "m1"]),
    ({"agent_id": "planner", "metadata": {"project.name": "zeus"}}, []),
    ({"agent_id": "archivist", "as_of": "2025-03-01T00:00:00Z"}, ["m5"]),
    ({"agent_id": "archivist", "as_of": _at(25)}, ["m6"]),
    ({"agent_id": "archivist", "now": "2025-04-01T00:00:00Z"}, ["m6"]),
    ({"agent_id": "nobody"}, []),
]
# (query, filters, expected ids in rank order): the recalls that take a query.
QUERY_CASES = [
    ("Lisbon flight", {"author": "ana"}, ["m1"]),
    ("hotel", {"run_id": "r1"}, []),
    ("flight", {"agent_id": "archivist", "as_of": "2025-03-01T00:00:00Z"}, ["m5"]),
    ("flight", {"agent_id": "archivist"}, ["m6"]),
    ("museum hours", {"metadata": {"project.name": "zeus"}, "tags": ["culture"]}, ["m3"]),
]


def _json(filters: dict) -> dict:
    """Filters as JSON carries them: datetimes as ISO 8601."""
    return {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in filters.items()}


def _query_params(filters: dict) -> list[tuple[str, str]]:
    """``GET /memories``' query: tags repeated, metadata as ``metadata.<path>``."""
    params = [("user_id", NS), ("limit", "50")]
    for name, value in _json(filters).items():
        if name == "tags":
            params += [("tags", t) for t in value]
        elif name == "metadata":
            params += [(f"metadata.{path}", v) for path, v in value.items()]
        else:
            params.append((name, value))
    return params


class Interfaces:
    """Each interface as ``name(query or None, filters) -> ids``."""

    def __init__(self, live_server, token: str):
        self.live_server, self.token = live_server, token
        url = live_server.url
        self.http = httpx.Client(base_url=f"{url}/api/v1",
                                 headers={"Authorization": f"Bearer {token}"}, timeout=30)
        self.client = MemoryConsole(url, token, retry=FAST)
        self.store = MemoryConsoleStore(url, token)

    def close(self):
        self.http.close()
        self.client.close()
        self.store.close()

    def rest_recall(self, query, filters):
        resp = self.http.post("/recall", json={"user_id": NS, "query": query or "",
                                                "limit": 50, **_json(filters)})
        assert resp.status_code == 200, resp.text
        return [h["memory_id"] for h in resp.json()["results"]]

    def rest_list(self, query, filters):
        resp = self.http.get("/memories", params=_query_params(filters))
        assert resp.status_code == 200, resp.text
        return [m["memory_id"] for m in resp.json()["memories"]]

    def client_recall(self, query, filters):
        return [h.memory_id for h in self.client.recall(NS, query or "", limit=50,
                                                        **filters).results]

    def client_list(self, query, filters):
        return [m.memory_id for m in self.client.list_memories(NS, limit=50, **filters).items]

    def langgraph_search(self, query, filters):
        return [item.key for item in self.store.search((NS,), query=query, filter=filters,
                                                        limit=50)]

    def mcp(self, calls):
        """Each ``(tool, arguments)`` of ``calls`` through one MCP session: the ids each
        answered."""
        async def steps(session):
            out = []
            for tool, args in calls:
                result = await session.call_tool(tool, args)
                assert not result.is_error, result.structured_content
                body = result.structured_content
                out.append([m["memory_id"] for m in body.get("results", body.get("memories"))])
            return out

        async def main():
            async with http_client(self.live_server, self.token) as session:
                return await steps(session)
        return anyio.run(main)


@pytest.fixture
def interfaces(live_server, memories, viewer):
    every = Interfaces(live_server, token_create(user=viewer))
    yield every
    every.close()


def test_every_interface_answers_each_filter_case_with_the_same_ids(interfaces, memories):
    """The empty-query cases on all seven reads, the query cases on the four recalls."""
    mcp_calls = [("search_memories", {"user_id": NS, "query": "", "limit": 50, **_json(f)})
                 for f, _ in LIST_CASES]
    mcp_calls += [("list_memories", {"user_id": NS, "limit": 50, **_json(f)})
                  for f, _ in LIST_CASES]
    mcp_calls += [("search_memories", {"user_id": NS, "query": q, "limit": 50, **_json(f)})
                  for q, f, _ in QUERY_CASES]
    mcp = interfaces.mcp(mcp_calls)
    n = len(LIST_CASES)
    got, want = {}, {}
    for i, (filters, expected) in enumerate(LIST_CASES):
        case = f"list {filters}"
        want[case] = [memories[e] for e in expected]
        got[case] = {
            "rest recall": interfaces.rest_recall(None, filters),
            "rest list": interfaces.rest_list(None, filters),
            "mcp search_memories": mcp[i],
            "mcp list_memories": mcp[n + i],
            "python recall": interfaces.client_recall(None, filters),
            "python list_memories": interfaces.client_list(None, filters),
            "langgraph search": interfaces.langgraph_search(None, filters),
        }
    for i, (query, filters, expected) in enumerate(QUERY_CASES):
        case = f"recall {query!r} {filters}"
        want[case] = [memories[e] for e in expected]
        got[case] = {
            "rest recall": interfaces.rest_recall(query, filters),
            "mcp search_memories": mcp[2 * n + i],
            "python recall": interfaces.client_recall(query, filters),
            "langgraph search": interfaces.langgraph_search(query, filters),
        }
    wrong = {case: {name: ids for name, ids in answers.items() if ids != want[case]}
             for case, answers in got.items()}
    assert {case: w for case, w in wrong.items() if w} == {}, want


def test_a_recall_with_an_empty_query_and_no_filter_still_answers_nothing(interfaces):
    assert interfaces.rest_recall(None, {}) == []
    assert interfaces.client_recall(None, {"now": "2025-04-01T00:00:00Z"}) == []


def test_recall_hits_carry_author_tags_and_the_agent_scope(interfaces, memories):
    resp = interfaces.http.post("/recall", json={"user_id": NS, "query": "Lisbon"})
    (hit,) = resp.json()["results"]
    assert (hit["memory_id"], hit["author"], hit["tags"], hit["agent_id"], hit["run_id"]) == (
        memories["m1"], "ana", ["travel"], "planner", "r1")
    (listed,) = interfaces.client.recall(NS, "", run_id="r2").results
    assert (listed.author, listed.tags, listed.agent_id) == ("bob", ["travel", "hotel"],
                                                             "planner")


@pytest.mark.parametrize(("filters", "field"), [
    ({"since": "last tuesday"}, "since"),
    ({"as_of": "2025-13-01"}, "as_of"),
    ({"since": "2025-03-05T00:00:00Z", "until": "2025-03-01T00:00:00Z"}, "until"),
    ({"agent_id": " planner"}, "agent_id"),
    ({"run_id": ""}, "run_id"),
    ({"metadata": {"project..name": "x"}}, "metadata.project..name"),
])
def test_a_bad_filter_is_a_400_naming_it_on_every_interface(interfaces, filters, field):
    recall = interfaces.http.post("/recall", json={"user_id": NS, "query": "", **filters})
    listed = interfaces.http.get("/memories", params=_query_params(filters))
    for resp in (recall, listed):
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"]["field"] == field
