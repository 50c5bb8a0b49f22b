"""Session list (filters, pagination) and transcript."""

import datetime as dt

import pytest
from django.test import Client

from memories.sessions import session_append, session_create
from tests.views.conftest import HX, ids, tags, text

pytestmark = pytest.mark.django_db(transaction=True)

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
    from memories.models import Session

    # No service writes summaries yet (consolidation will); set it as that job would.
    Session.objects.filter(pk="s-1").update(summary="Lunch is at Cafe Lumen on Fridays.")
    body = text(viewer_client.get("/sessions/s-1/"))
    assert 'id="session-summary">Lunch is at Cafe Lumen on Fridays.<' in body


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
    # session, user, role groups; COUNT, one page with message counts.
    with django_assert_num_queries(5):
        viewer_client.get("/sessions/")
