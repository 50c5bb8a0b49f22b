"""Session list (filters, pagination) and transcript."""

import datetime as dt

import pytest
from django.test import Client

from sessions.services import session_append, session_create
from tests.views.conftest import HX, ids, tags, text

# The PostgreSQL pass runs these (scripts/test -m postgres): JSON queries of promoted memories.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

T0 = dt.datetime(2025, 3, 1, 9, 0, tzinfo=dt.UTC)


def listed(body) -> list[str]:
    return [
        a["href"].split("/")[2]
        for t, a in tags(body)
        if t == "a" and a.get("href", "").startswith("/sessions/s-")
    ]


@pytest.fixture
def conversation(builtins):
    session = session_create(user_id="u-a", session_id="s-1", agent_id="helper", created_at=T0)
    session_append(
        session_id="s-1",
        messages=[
            {"role": "user", "content": "Where is the team lunch?", "at": T0},
            {
                "role": "assistant",
                "content": "At Cafe Lumen 🍜, on Fridays.",
                "at": T0 + dt.timedelta(seconds=5),
            },
            {"role": "user", "content": "Thanks", "at": T0 + dt.timedelta(seconds=9)},
        ],
    )
    return session


def test_it_lists_sessions(viewer_client, conversation):
    session_create(user_id="u-b", session_id="s-2", agent_id="other")
    resp = viewer_client.get("/sessions/")
    assert resp.status_code == 200 and "<html" in text(resp) and "session-rows" in ids(resp.content)
    assert listed(resp.content) == ["s-2", "s-1"]  # most recently active first
    assert "helper" in text(resp) and ">3</td>" in text(resp)  # message count


def test_it_filters_sessions(viewer_client, conversation):
    session_create(user_id="u-b", session_id="s-2", agent_id="other")
    assert listed(viewer_client.get("/sessions/", {"user_id": "u-a"}).content) == ["s-1"]
    assert listed(viewer_client.get("/sessions/", {"agent_id": "other"}).content) == ["s-2"]
    assert listed(viewer_client.get("/sessions/", {"agent_id": "nobody"}).content) == []
    bad = viewer_client.get("/sessions/", {"per_page": "1000"})
    assert bad.status_code == 400 and "alert-error" in text(bad)


def test_it_paginates_sessions_keeping_filters(viewer_client, builtins):
    for n in range(12):
        session_create(user_id="u-a", session_id=f"s-{n:02d}", agent_id="bot")
    resp = viewer_client.get("/sessions/", {"agent_id": "bot", "per_page": "10", "page": "2"})
    assert len(listed(resp.content)) == 2
    hrefs = [a["hx-get"] for t, a in tags(resp.content) if t == "a" and "hx-get" in a]
    assert hrefs and all("agent_id=bot" in h and "per_page=10" in h for h in hrefs)


def test_htmx_gets_the_rows_fragment(viewer_client, conversation):
    resp = viewer_client.get("/sessions/", {"user_id": "u-a"}, headers=HX)
    assert resp.status_code == 200 and "<html" not in text(resp)
    assert text(resp).lstrip().startswith('<div id="session-rows">')


def test_it_shows_the_transcript_oldest_first(viewer_client, conversation):
    resp = viewer_client.get("/sessions/s-1/")
    body = text(resp)
    assert resp.status_code == 200 and "transcript" in ids(body)
    order = [
        body.index(s)
        for s in ("Where is the team lunch?", "At Cafe Lumen 🍜, on Fridays.", "Thanks")
    ]
    assert order == sorted(order)
    assert "2025-03-01 09:00:05" in body and "role-assistant" in body
    assert "No summary yet." in body


def test_it_shows_the_summary(viewer_client, conversation):
    from sessions.models import Session

    Session.objects.filter(pk="s-1").update(summary="Lunch is at Cafe Lumen on Fridays.",
                                            summary_method="llm")
    body = text(viewer_client.get("/sessions/s-1/"))
    assert 'id="session-summary">Lunch is at Cafe Lumen on Fridays.<' in body
    assert "Written by the language model." in body
    Session.objects.filter(pk="s-1").update(summary_method="local")
    assert "Written by the local method." in text(viewer_client.get("/sessions/s-1/"))


def test_session_ids_with_odd_characters_work(viewer_client, builtins):
    session_create(user_id="u-a", session_id="team/lunch: 周五?")
    listing = viewer_client.get("/sessions/").content
    href = next(
        a["href"]
        for t, a in tags(listing)
        if t == "a" and "周五" in a.get("href", "") or "%E5%91%A8" in a.get("href", "")
    )
    resp = viewer_client.get(href)
    assert resp.status_code == 200 and "team/lunch: 周五?" in text(resp)


def test_unknown_session_is_404(viewer_client, builtins):
    assert viewer_client.get("/sessions/nope/").status_code == 404


def test_sessions_need_login_and_get(viewer_client, conversation):
    assert Client().get("/sessions/s-1/").status_code == 302
    assert viewer_client.post("/sessions/").status_code == 405
    assert viewer_client.post("/sessions/s-1/").status_code == 405


def test_session_list_query_count_is_pinned(viewer_client, conversation, django_assert_num_queries):
    for n in range(5):
        session_create(user_id="u-a", session_id=f"s-x{n}")
    # session, user, role groups; COUNT, one page with message counts; the namespace
    # suggestions of the filter.
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(7):
        viewer_client.get("/sessions/")


# --- hot / cold, warm ---------------------------------------------------------------------


def states(body) -> dict[str, str]:
    """``{session_id: "hot" | "cold" | "unknown"}`` from the list's rows."""
    out, current = {}, None
    html = body.decode() if isinstance(body, bytes) else body
    for chunk in html.split("<tr")[1:]:
        if 'data-session-id="' not in chunk:
            continue
        current = chunk.split('data-session-id="', 1)[1].split('"', 1)[0]
        for state in ("hot", "cold", "unknown"):
            if f">{state}</span>" in chunk:
                out[current] = state
    return out


def make_cold(session_id: str) -> None:
    from sessions import store as session_store
    from sessions.models import Session

    session_store.window_drop(session_store.keys(Session.objects.get(pk=session_id)))


def test_the_list_shows_hot_and_cold(editor_client, viewer_client, conversation):
    session_create(user_id="u-b", session_id="s-2")
    make_cold("s-1")
    assert states(viewer_client.get("/sessions/").content) == {"s-1": "cold", "s-2": "hot"}
    assert "Warm</button>" not in text(viewer_client.get("/sessions/"))  # viewers read only
    body = text(editor_client.get("/sessions/"))
    assert body.count("Warm</button>") == 1 and 'action="/sessions/s-1/warm/"' in body


def test_an_editor_warms_a_cold_session(editor_client, conversation):
    from sessions.services import session_context

    make_cold("s-1")
    assert session_context(session_id="s-1")["hot"] is False
    resp = editor_client.post("/sessions/s-1/warm/", headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<span class="session-state">') and ">hot</span>" in body
    assert "3 messages in the hot window" in body
    context = session_context(session_id="s-1")
    assert context["hot"] is True and [m["content"] for m in context["messages"]][-1] == "Thanks"
    make_cold("s-1")
    page = editor_client.post("/sessions/s-1/warm/")  # without JavaScript
    assert page.status_code == 302 and page["Location"] == "/sessions/s-1/"
    assert "Session warmed: 3 messages" in text(editor_client.get(page["Location"]))


def test_a_viewer_cannot_warm(viewer_client, conversation):
    from sessions.services import session_context

    make_cold("s-1")
    resp = viewer_client.post("/sessions/s-1/warm/", headers=HX)
    assert resp.status_code == 403 and "needs the editor role" in text(resp)
    assert session_context(session_id="s-1")["hot"] is False


def test_warm_404_405_and_redis_down(editor_client, conversation, monkeypatch):
    assert editor_client.post("/sessions/nope/warm/").status_code == 404
    assert editor_client.get("/sessions/s-1/warm/").status_code == 405

    def boom(session):
        from memories import store

        raise store.RedisError("down")

    monkeypatch.setattr("sessions.store.window_warm", boom)
    resp = editor_client.post("/sessions/s-1/warm/", headers=HX)
    assert resp.status_code == 503 and "Redis is unreachable" in text(resp)


def test_the_state_is_unknown_when_redis_is_down(viewer_client, conversation, monkeypatch):
    from memories import store

    class Down:
        def pipeline(self, **kwargs):
            raise store.RedisError("down")

    monkeypatch.setattr("memories.store.get_client", lambda: Down())
    monkeypatch.setattr("memories.store.redis_available", lambda: False)
    resp = viewer_client.get("/sessions/")
    assert resp.status_code == 200 and states(resp.content) == {"s-1": "unknown"}


def test_warm_works_for_odd_session_ids(editor_client, builtins):
    session_create(user_id="u-a", session_id="team/lunch: 周五?")
    session_append(session_id="team/lunch: 周五?", messages=[{"role": "user", "content": "hi"}])
    make_cold("team/lunch: 周五?")
    body = text(editor_client.get("/sessions/"))
    action = next(
        a["action"] for t, a in tags(body) if t == "form" and a.get("action", "").endswith("/warm/")
    )
    resp = editor_client.post(action, headers=HX)
    assert resp.status_code == 200 and "1 message in the hot window" in text(resp)


def test_the_list_filters_by_activity_date(viewer_client, builtins):
    session_create(user_id="u-a", session_id="s-old", created_at=T0)  # last active then
    session_create(user_id="u-b", session_id="s-new")
    assert listed(viewer_client.get("/sessions/", {"active_since": "2025-06-01"}).content) == [
        "s-new"
    ]
    assert len(listed(viewer_client.get("/sessions/", {"active_since": "2025-03-01"}).content)) == 2
    bad = viewer_client.get("/sessions/", {"active_since": "soon"})
    assert bad.status_code == 400 and "alert-error" in text(bad)


# --- promote a message, the session's memories --------------------------------------------


def test_an_editor_promotes_a_message(editor_client, conversation):
    from memories.models import Memory

    page = text(editor_client.get("/sessions/s-1/"))
    assert page.count("Promote</button>") == 3
    resp = editor_client.post("/sessions/s-1/messages/2/promote/", headers=HX)
    body = text(resp)
    memory = Memory.objects.get()
    assert resp.status_code == 200 and "<html" not in body
    assert f'href="/memories/{memory.memory_id}/"' in body and "promoted:" in body
    assert (memory.content, memory.type, memory.conversation_id) == (
        "At Cafe Lumen 🍜, on Fridays.",
        "long_term",
        None,
    )
    assert memory.metadata == {"promoted_from": {"session_id": "s-1", "seq": 2}}
    assert memory.history.get().kind == "promote" and memory.history.get().changed_by == "eddie"
    # The page now links the message to its memory and lists it among the session's memories.
    page = text(editor_client.get("/sessions/s-1/"))
    assert page.count("Promote</button>") == 2 and "session-memories" in ids(page)
    assert page.count(f'href="/memories/{memory.memory_id}/"') == 2
    # Promoting again finds the same memory (dedup); without JavaScript: back to the page.
    again = editor_client.post("/sessions/s-1/messages/2/promote/")
    assert again.status_code == 302 and again["Location"] == "/sessions/s-1/#msg-2"
    assert Memory.objects.count() == 1
    assert "was already a long-term memory" in text(editor_client.get("/sessions/s-1/"))


def test_a_viewer_cannot_promote_a_message(viewer_client, conversation):
    from memories.models import Memory

    assert "Promote</button>" not in text(viewer_client.get("/sessions/s-1/"))
    resp = viewer_client.post("/sessions/s-1/messages/1/promote/", headers=HX)
    assert resp.status_code == 403 and not Memory.objects.exists()


def test_promote_404_and_405(editor_client, conversation):
    assert editor_client.post("/sessions/s-1/messages/9/promote/").status_code == 404
    assert editor_client.post("/sessions/nope/messages/1/promote/").status_code == 404
    assert editor_client.get("/sessions/s-1/messages/1/promote/").status_code == 405
    long = editor_client.post("/sessions/s-1/messages/1/promote/", {"reason": "x" * 501})
    assert long.status_code == 400


def test_the_session_lists_its_memories(viewer_client, conversation, make_memory):
    scoped = make_memory("lunch budget is 15 euros", conversation_id="s-1")
    make_memory("other user, same conversation id", user_id="u-z", conversation_id="s-1")
    make_memory("user-wide, not from this session")
    body = text(viewer_client.get("/sessions/s-1/"))
    listed_ids = [a["data-memory-id"] for t, a in tags(body) if "data-memory-id" in a]
    assert listed_ids == [scoped.memory_id]


def test_session_detail_query_count_is_pinned(
    viewer_client, conversation, django_assert_num_queries
):
    # session, user, role groups; the session, its memories, its messages.
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(7):
        assert viewer_client.get("/sessions/s-1/").status_code == 200


@pytest.mark.django_db
def test_the_list_filters_hot_and_cold_sessions(viewer_client, builtins):
    from sessions import services as sessions
    from sessions import store as session_store

    hot = sessions.session_create(user_id="u-a", session_id="s-hot")
    cold = sessions.session_create(user_id="u-a", session_id="s-cold")
    session_store.window_drop(session_store.keys(cold))
    body = viewer_client.get("/sessions/?state=hot").content.decode()
    assert hot.session_id in body and "s-cold" not in body
    body = viewer_client.get("/sessions/?state=cold").content.decode()
    assert "s-cold" in body and "s-hot" not in body
