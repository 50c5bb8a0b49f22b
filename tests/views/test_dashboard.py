"""Overview, layout (nav, user, role, logout, CSRF header, Redis banner) and placeholders."""

import json

import pytest
from django.test import Client

from memories import services
from tests.views.conftest import HX, attr_values, ids, tags, text

pytestmark = pytest.mark.django_db


def test_it_shows_counts_and_recent_changes(editor_client, editor, make_memory):
    live = make_memory("the deploy key rotates monthly")
    gone = make_memory("an outdated fact", user_id="u-b")
    services.memory_forget(memory_id=gone.memory_id, actor=editor, reason="stale")
    resp = editor_client.get("/")
    assert resp.status_code == 200
    body = text(resp)
    assert "<html" in body and 'id="stats"' in body
    assert 'id="stat-live">1<' in body and 'id="stat-forgotten">1<' in body
    assert 'id="stat-namespaces">2<' in body and 'id="stat-sessions">0<' in body
    assert live.memory_id in body and "stale" in body  # history rows, newest first
    assert body.index(gone.memory_id) < body.index(live.memory_id)
    assert 'id="quick-results"' in body


def test_it_renders_the_layout(editor_client):
    body = text(editor_client.get("/"))
    for label, href in [
        ("Overview", "/"),
        ("Memories", "/memories/"),
        ("Sessions", "/sessions/"),
        ("Search", "/search/"),
        ("Index", "/index/"),
        ("Activity", "/activity/"),
    ]:
        assert f'href="{href}"' in body and f">{label}</a>" in body
    assert "eddie" in body and 'class="badge badge-role" title="your role">editor<' in body
    logout = [a for t, a in tags(body) if t == "form" and a.get("action") == "/accounts/logout/"]
    assert logout and logout[0]["method"] == "post"
    scripts = attr_values(body, "src")
    assert any(
        s.endswith("django_htmx/htmx-2.min.js") and s.startswith("/static/") for s in scripts
    ), scripts
    assert not any(s.startswith(("http:", "https:", "//")) for s in scripts)  # no CDN
    assert "/static/console.css" in attr_values(body, "href")


def test_every_hx_headers_value_is_json_with_the_csrf_token(editor_client):
    """Public case B28: hx-headers must parse as JSON and carry X-CSRFToken."""
    body = text(editor_client.get("/"))
    values = attr_values(body, "hx-headers")
    assert values
    for value in values:
        headers = {k.lower(): v for k, v in json.loads(value).items()}
        assert len(headers["x-csrftoken"]) >= 32


def test_htmx_gets_the_stats_fragment_only(editor_client, make_memory):
    make_memory()
    resp = editor_client.get("/", headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="stats">') and "Recent changes" in body
    assert resp["Vary"] and "HX-Request" in resp["Vary"]


def test_it_sends_anonymous_users_to_login():
    for url in ["/", "/memories/", "/sessions/", "/search/", "/index/", "/activity/"]:
        resp = Client().get(url)
        assert resp.status_code == 302 and resp["Location"].startswith("/accounts/login/?next=")


def test_the_login_page_renders_and_logs_in(editor):
    client = Client()
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and 'name="password"' in text(page)
    assert "Memories</a>" not in text(page)  # no nav for anonymous users
    resp = client.post("/accounts/login/", {"username": "eddie", "password": "pw-eddie"})
    assert resp.status_code == 302 and resp["Location"] == "/"
    assert client.get("/").status_code == 200
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_a_user_without_a_role_gets_403(norole_client):
    resp = norole_client.get("/")
    assert resp.status_code == 403 and "needs the viewer role" in text(resp)
    part = norole_client.get("/memories/", headers=HX)
    assert part.status_code == 403 and "<html" not in text(part)


def test_it_refuses_post_on_pages(editor_client):
    assert editor_client.post("/").status_code == 405
    assert editor_client.post("/index/").status_code == 405


def test_it_shows_a_banner_when_redis_is_down(editor_client, monkeypatch):
    assert "redis-banner" not in ids(editor_client.get("/").content)
    monkeypatch.setattr("memories.store.redis_available", lambda: False)
    resp = editor_client.get("/")
    assert resp.status_code == 200 and "redis-banner" in ids(resp.content)
    assert "Redis is unreachable" in text(resp)


def test_the_tokens_link_is_for_admins_only(editor_client, admin_role_client):
    assert 'href="/tokens/"' not in text(editor_client.get("/"))
    body = text(admin_role_client.get("/"))
    assert 'href="/tokens/"' in body and ">Tokens</a>" in body


@pytest.mark.parametrize(
    ("url", "current"),
    [("/index/", "Index"), ("/activity/", "Activity"), ("/search/synonyms/", "Synonyms")],
)
def test_the_nav_marks_the_current_section(viewer_client, url, current):
    body = text(viewer_client.get(url))
    assert f'aria-current="page">{current}</a>' in body


def test_overview_query_count_is_pinned(editor_client, make_memory, django_assert_num_queries):
    for n in range(5):
        make_memory(f"fact number {n}")
    # session, user, role groups; memory aggregate, session count, history rows.
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(7):
        assert editor_client.get("/").status_code == 200
