"""GET /memories and GET /namespaces: keyset pages that never repeat or skip a row, also
when many memories share one created_at (a bulk import), and stay in the token's namespaces."""

import pytest

from memories import services
from tests.conftest import ApiClient


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


@pytest.mark.parametrize("path", ["/memories?user_id=mo", "/namespaces"])
def test_a_forged_cursor_is_a_400_naming_it(api, path):
    assert api.get(path + "&cursor=Zm9v" if "?" in path else path + "?cursor=Zm9v").json()[
        "error"]["field"] == "cursor"
