"""The Activity page: the audit feed with filters, pages, memory links and a snippet of each
memory's text (a viewer may read memories; the API's audit feed still carries no content)."""

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest

from memories import services
from memories.models import AuditEvent
from tests.views.conftest import HX, ids, tags, text

pytestmark = pytest.mark.django_db

SECRET = "the vault code is 4417 and nobody may know"


def actions(body) -> list[str]:
    return [a["data-action"] for t, a in tags(body) if t == "tr" and "data-action" in a]


def nav_links(body) -> dict[str, str]:
    return {
        a["rel"]: a["href"] for t, a in tags(body) if t == "a" and a.get("rel") in ("prev", "next")
    }


@pytest.fixture
def story(editor, admin_user, make_memory):
    m = make_memory(SECRET)
    services.memory_update(memory_id=m.memory_id, actor=editor, importance=0.9, reason="key")
    services.memory_forget(memory_id=m.memory_id, actor=editor, reason="leaked")
    services.audit_record(actor=admin_user, action="reindex", target="*", data={"job_id": "j1"})
    return m


def test_it_shows_the_feed_newest_first_with_a_snippet(viewer_client, story):
    resp = viewer_client.get("/activity/")
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body and "activity-table" in ids(body)
    assert actions(body) == ["reindex", "forget", "importance", "create"]
    assert f'href="/memories/{story.memory_id}/"' in body  # memory targets link to the page
    assert "leaked" in body and "eddie" in body and "ada" in body
    assert body.count(f'<div class="small muted snippet">{SECRET}</div>') == 3  # each version


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"actor": "eddie"}, ["forget", "importance"]),
        ({"action": "forget"}, ["forget"]),
        ({"action": "reindex"}, ["reindex"]),
        ({"target": "*"}, ["reindex"]),
        ({"actor": "nobody"}, []),
    ],
)
def test_it_filters(viewer_client, story, params, expected):
    resp = viewer_client.get("/activity/", params)
    assert resp.status_code == 200 and actions(resp.content) == expected


def test_it_filters_by_target_and_since(viewer_client, story, make_memory):
    make_memory("another memory")
    assert actions(viewer_client.get("/activity/", {"target": story.memory_id}).content) == [
        "forget",
        "importance",
        "create",
    ]
    future = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    assert actions(viewer_client.get("/activity/", {"since": future}).content) == []
    assert len(actions(viewer_client.get("/activity/", {"since": "2020-01-01T00:00"}).content)) == 5


@pytest.mark.parametrize(
    "params", [{"since": "yesterday"}, {"per_page": "5"}, {"page": "0"}, {"page": "999"}]
)
def test_bad_filters_are_form_errors(viewer_client, params):
    resp = viewer_client.get("/activity/", params)
    assert resp.status_code == 400 and "alert-error" in text(resp)


def test_it_pages_keeping_the_filters(viewer_client, admin_user):
    for n in range(25):
        services.audit_record(actor=admin_user, action="reindex", target=f"user:{n}")
    params = {"action": "reindex", "per_page": "10"}
    first = viewer_client.get("/activity/", params)
    assert len(actions(first.content)) == 10
    links = nav_links(first.content)
    assert set(links) == {"next"}
    query = parse_qs(urlsplit(links["next"]).query)
    assert query == {"action": ["reindex"], "per_page": ["10"], "page": ["2"]}
    third = viewer_client.get("/activity/", {**params, "page": "3"})
    assert len(actions(third.content)) == 5 and set(nav_links(third.content)) == {"prev"}
    assert "user:4" in text(third) and "user:24" not in text(third)  # oldest on the last page


def test_htmx_gets_the_rows_fragment(viewer_client, story):
    resp = viewer_client.get("/activity/", {"action": "forget"}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="activity-rows">') and actions(body) == ["forget"]
    assert "HX-Request" in resp["Vary"]


def test_a_purged_memory_is_marked_not_linked(viewer_client, admin_user, make_memory):
    m = make_memory("soon gone")
    services.memory_purge(memory_id=m.memory_id, actor=admin_user, reason="gdpr")
    body = text(viewer_client.get("/activity/"))
    assert actions(body) == ["purge"]  # the purge removed the versions; the event stays
    assert m.memory_id in body and f'href="/memories/{m.memory_id}/"' not in body
    assert "purged" in body and "gdpr" in body and "soon gone" not in body


def test_activity_query_count_is_pinned(viewer_client, story, django_assert_num_queries):
    for n in range(5):
        AuditEvent.objects.create(actor="ada", action="reindex", target=f"user:{n}")
    # session, user, role groups; history slice, event slice, which memory targets exist;
    # the namespace suggestions of the filter.
    # + the open conflicts' COUNT in the navigation (base.html); the actions the events hold
    # (the action filter's choices).
    with django_assert_num_queries(9):
        assert viewer_client.get("/activity/").status_code == 200


def test_activity_is_get_only_and_needs_a_role(viewer_client, norole_client):
    assert viewer_client.post("/activity/").status_code == 405
    assert norole_client.get("/activity/").status_code == 403


def test_each_action_is_listed_once_a_rollback_too(viewer_client, admin_user, make_memory):
    m = make_memory("Deploys run on Tuesdays")
    services.memory_update(memory_id=m.memory_id, actor=admin_user, content="Deploys run on Mondays",
                           reason="moved")
    services.memory_rollback(memory_id=m.memory_id, version=1, actor=admin_user, reason="oops")
    assert AuditEvent.objects.filter(action="rollback").count() == 1  # the admin event stays
    body = text(viewer_client.get("/activity/"))
    assert actions(body) == ["rollback", "edit", "create"]
    assert "Deploys run on Tuesdays" in body and "Deploys run on Mondays" in body


def test_it_filters_by_namespace_with_an_action_select(viewer_client, admin_user, make_memory):
    a = make_memory("Alpha likes tea", user_id="ns-alpha")
    make_memory("Beta likes coffee", user_id="ns-beta")
    services.audit_record(actor=admin_user, action="reindex", target="user:ns-alpha")
    services.audit_record(actor=admin_user, action="reindex", target="user:ns-beta")
    body = text(viewer_client.get("/activity/", {"namespace": "ns-alpha"}))
    assert actions(body) == ["reindex", "create"] and a.memory_id in body
    assert "Beta likes coffee" not in body and "user:ns-beta" not in body
    select = [a for t, a in tags(body) if t == "select" and a.get("name") == "action"]
    assert select, "the action filter is a select"
    options = [a.get("value") for t, a in tags(body) if t == "option"]
    assert "rollback" in options and "reindex" in options  # a change kind, a held action
    assert viewer_client.get("/activity/", {"namespace": " ns-alpha"}).status_code == 400
    assert viewer_client.get("/activity/", {"action": "no-such"}).status_code == 400


def test_the_action_filter_offers_every_kind_the_feed_holds(viewer_client, admin_user, story):
    """Bug: the filter's hand-kept list lacked actions the feed shows (user_created,
    supersede, invalidate, ...): filtering by them was impossible."""
    services.audit_record(actor=admin_user, action="user_created", target="ana", data={})
    body = viewer_client.get("/activity/").content.decode()
    offered = {a["value"] for t, a in tags(body) if t == "option" and "value" in a}
    assert {"user_created", "reindex", "supersede", "invalidate", "revalidate", "forget"} <= offered
    only = viewer_client.get("/activity/", {"action": "user_created"})
    assert only.status_code == 200 and actions(only.content) == ["user_created"]
