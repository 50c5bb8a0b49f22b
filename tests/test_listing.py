"""GET /memories and GET /namespaces: keyset pages that never repeat or skip a row, also
when many memories share one created_at (a bulk import), and stay in the token's namespaces."""

import pytest

from memories import services
from tests.conftest import ApiClient

# The PostgreSQL pass runs these (scripts/test -m postgres): keyset cursors and JSON metadata
# filters of every list.
pytestmark = pytest.mark.postgres


def walk(api, path):
    seen, cursor = [], None
    while True:
        sep = "&" if "?" in path else "?"
        body = api.get(path + (f"{sep}cursor={cursor}" if cursor else "")).json()
        key = "memories" if "memories" in body else "namespaces"
        seen += body[key]
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


def test_pages_cover_memories_that_share_a_timestamp(api):
    services.memory_create_many(items=[
        {"user_id": "kai", "content": f"imported note {n}"} for n in range(9)])
    services.memory_create(user_id="kai", content="user-wide later note")
    rows = walk(api, "/memories?user_id=kai&limit=2")
    assert len(rows) == 10 and len({r["memory_id"] for r in rows}) == 10
    assert rows[0]["content"] == "user-wide later note"  # newest first


def test_filters_by_conversation_type_and_metadata(api):
    services.memory_create(user_id="lia", content="in c1", conversation_id="c1",
                           metadata={"langgraph": {"key": "k1"}})
    services.memory_create(user_id="lia", content="user-wide", type="working")
    forgotten, _ = services.memory_create(user_id="lia", content="forgotten one")
    services.memory_forget(memory_id=forgotten.memory_id)
    contents = lambda q: sorted(m["content"] for m in api.get(q).json()["memories"])  # noqa: E731
    assert contents("/memories?user_id=lia&conversation_id=c1") == ["in c1"]
    assert contents("/memories?user_id=lia&conversation_id=") == ["user-wide"]
    assert contents("/memories?user_id=lia&type=working") == ["user-wide"]
    assert contents("/memories?user_id=lia&metadata.langgraph.key=k1") == ["in c1"]
    assert contents("/memories?user_id=lia&include_forgotten=1") == [
        "forgotten one", "in c1", "user-wide"]
    bad = api.get("/memories?user_id=lia&metadata.a;drop=1").json()["error"]
    assert bad["field"] == "metadata.a;drop"
    assert api.get("/memories?user_id=lia&type=forever").json()["error"]["field"] == "type"
    assert api.get("/memories?user_id=lia&limit=0").json()["error"]["field"] == "limit"


def test_namespaces_page_and_respect_the_token(api, editor):
    for user, conv in [("mo", None), ("mo", "c2"), ("mo", "c1"), ("nia", None)]:
        services.memory_create(user_id=user, content=f"{user} {conv}", conversation_id=conv)
    rows = walk(api, "/namespaces?limit=1")
    assert [(r["user_id"], r["conversation_id"]) for r in rows] == [
        ("mo", None), ("mo", "c1"), ("mo", "c2"), ("nia", None)]
    from accounts.tokens import token_create

    restricted = ApiClient(None)
    restricted.token = token_create(user=editor, namespaces=["nia"])
    assert [r["user_id"] for r in restricted.get("/namespaces").json()["namespaces"]] == ["nia"]
    assert restricted.get("/namespaces?user_id=mo").status_code == 403
    assert restricted.get("/memories?user_id=mo").status_code == 403


def test_metadata_filters_are_bounded(api):
    """Each filter is a JSON path read of every candidate row: at most ten per request."""
    ten = "&".join(f"metadata.k{n}=v" for n in range(10))
    assert api.get(f"/memories?user_id=lia&{ten}").status_code == 200
    refused = api.get(f"/memories?user_id=lia&{ten}&metadata.k10=v")
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "metadata"


@pytest.mark.parametrize("path", ["/memories?user_id=mo", "/namespaces"])
def test_a_forged_cursor_is_a_400_naming_it(api, path):
    assert api.get(path + "&cursor=Zm9v" if "?" in path else path + "?cursor=Zm9v").json()[
        "error"]["field"] == "cursor"


def _b64(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).decode()


def _cursor(value) -> str:
    """A cursor as the lists encode one, holding any JSON ``value``."""
    import json

    return _b64(json.dumps(value).encode())


def _decoded(cursor: str):
    import base64
    import json

    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


@pytest.fixture
def every_list(admin_user, admin_api, empty_queues, settings):
    """Two items (so a first page of one gives a cursor) in every list the API pages, and
    each list's path with the positions of its key that may be null."""
    settings.WEBHOOKS_ALLOW_PRIVATE = True  # endpoints on loopback, never called here
    from lab import query_sets, runs
    from sessions import services as sessions

    for n in range(2):
        memory = services.memory_create(user_id="kai", content=f"tea note {n}",
                                        conversation_id=f"c{n}")[0]
        sessions.session_create(user_id="kai", session_id=f"s-{n}")
        admin_api.post("/judgments", {"user_id": "kai", "query": f"tea {n}",
                                      "memory_id": memory.memory_id, "grade": 2})
        queryset = query_sets.queryset_create(actor=admin_user, name=f"qs {n}",
                                              user_id="kai", queries=["tea"])
        runs.run_create(actor=admin_user, name=f"run {n}", query_set=queryset,
                        profiles=["bm25"])
        hook = admin_api.post("/webhooks", {"url": f"http://127.0.0.1:9/{n}",
                                            "events": ["memory.created"]}).json()
    for _ in range(2):
        admin_api.post(f"/webhooks/{hook['id']}/test")
    return {
        "/memories?user_id=kai": (), "/namespaces": (1,), "/sessions?user_id=kai": (),
        "/audit": (), "/profiles": (), "/judgments?user_id=kai": (), "/query-sets": (),
        "/runs": (), "/webhooks": (), f"/webhooks/{hook['id']}/deliveries": (),
    }


# A key element swapped for a value of another type, or for one of its own type that no
# database compares with a column, must be refused.
OTHER_TYPES = [None, [], {}, True, 7, 1.5, float("inf"), "x"]
UNSTORABLE = {int: [2**70], str: ["a\x00b", "\ud800"]}


def _tampered(key: list, nullable) -> list:
    out = [key[:-1], [*key, key[-1]], {"a": 1}, "text", 5, None]
    for i, value in enumerate(key):
        wrong = [w for w in OTHER_TYPES if type(w) is not type(value)
                 and not (w is None and i in nullable)] + UNSTORABLE.get(type(value), [])
        out += [[*key[:i], w, *key[i + 1:]] for w in wrong]
    return out


@pytest.mark.django_db  # the memories reach Redis (the run searches them)
def test_every_list_answers_a_tampered_cursor_with_a_400_naming_it(admin_api, every_list):
    """Fuzz: each element of a real cursor swapped for a value of another type (or one no
    database compares), cursors of another shape, and ones that are no cursor at all
    (deep nesting, bad base64, too long), on every list of the API."""
    for path, nullable in every_list.items():
        sep = "&" if "?" in path else "?"
        first = admin_api.get(f"{path}{sep}limit=1")
        assert first.status_code == 200, (path, first.content)
        key = _decoded(first.json()["next_cursor"])
        cursors = [_cursor(t) for t in _tampered(key, nullable)]
        cursors += [_b64(b"[" * 3000), _b64(b"not json"), "%%", "Zm9v", "x" * 10_000]
        for cursor in cursors:
            answer = admin_api.get(f"{path}{sep}cursor={cursor}")
            assert answer.status_code == 400, (path, cursor, answer.content[:300])
            assert answer.json()["error"]["field"] == "cursor", (path, cursor)


@pytest.mark.parametrize(("path", "key"), [
    ("/namespaces", [None, None]),
    ("/namespaces", [None, "x"]),
    ("/memories?user_id=kai", ["2026-12-04T01:32:02+00:00", None]),
])
def test_the_reported_tampered_cursors_are_400s(api, path, key):
    sep = "&" if "?" in path else "?"
    answer = api.get(f"{path}{sep}cursor={_cursor(key)}")
    assert answer.status_code == 400 and answer.json()["error"]["field"] == "cursor"
