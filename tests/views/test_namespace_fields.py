"""Namespace fields suggest the namespaces that exist (``<datalist id="namespaces">``) and,
where a namespace must exist, say "no such namespace" as a form error; filters only
suggest (an unknown namespace there simply matches nothing)."""

import pytest

from sessions.services import session_create
from tests.views.conftest import HX, tags, text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues")]

PAGES = [
    "/memories/",
    "/sessions/",
    "/activity/",
    "/search/",
    "/search/compare/",
    "/lab/query-sets/",
    "/lab/judgments/",
    "/index/policy/",
    "/index/backup/",
    "/tokens/",
]


@pytest.fixture
def spaces(make_memory):
    make_memory("deploys run on Tuesdays", user_id="team-harbor")
    session_create(user_id="only-sessions", session_id="s-1")  # a session makes one too


def suggestions(body: str) -> list[str]:
    out, inside = [], False
    for tag, a in tags(body):
        if tag == "datalist":
            inside = a.get("id") == "namespaces"
        elif tag == "option" and inside:
            out.append(a.get("value"))
        elif tag != "option":
            inside = inside and tag == "datalist"
    return out


@pytest.mark.parametrize("url", PAGES)
def test_every_namespace_field_suggests_the_existing_ones(admin_role_client, spaces, url):
    body = text(admin_role_client.get(url))
    assert suggestions(body) == ["only-sessions", "team-harbor"], url
    assert any(a.get("list") == "namespaces" for t, a in tags(body) if t == "input"), url


def test_fragments_run_no_query_for_the_suggestions(admin_role_client, spaces):
    body = text(admin_role_client.get("/memories/", headers=HX))
    assert "<datalist" not in body


@pytest.mark.parametrize(
    ("method", "url", "data", "status"),
    [
        ("get", "/search/compare/", {"user_id": "team-harbour", "q": "deploy"}, 400),
        ("post", "/lab/query-sets/", {"name": "q", "user_id": "team-harbour", "queries": "x"}, 400),
        ("get", "/index/policy/", {"user_id": "team-harbour"}, 400),
        ("post", "/index/reindex/", {"user_id": "team-harbour"}, 400),
        ("get", "/index/backup/export/", {"user_id": "team-harbour"}, 404),
    ],
)
def test_a_namespace_that_must_exist_is_a_form_error(
    admin_role_client, spaces, method, url, data, status
):
    resp = getattr(admin_role_client, method)(url, data)
    assert resp.status_code == status, text(resp)[:300]
    assert "No such namespace: “team-harbour”" in text(resp)
    good = {**data, "user_id": "team-harbor"}
    assert getattr(admin_role_client, method)(url, good).status_code in (200, 201, 202, 302)


def test_search_says_when_a_namespace_does_not_exist(admin_role_client, spaces):
    """Recall of an empty namespace answers "No results" (as the API does); the page adds
    that no such namespace exists, and a namespace with sessions only does exist."""
    resp = admin_role_client.get("/search/", {"user_id": "team-harbour", "q": "deploy"})
    assert resp.status_code == 200 and "No results" in text(resp)
    assert "No such namespace: “team-harbour”" in text(resp)
    resp = admin_role_client.get("/search/", {"user_id": "only-sessions", "q": "deploy"})
    assert resp.status_code == 200 and "No such namespace" not in text(resp)


def test_filters_only_suggest(admin_role_client, spaces):
    for url in ("/memories/", "/sessions/", "/activity/", "/lab/judgments/"):
        key = "namespace" if url == "/activity/" else "user_id"
        resp = admin_role_client.get(url, {key: "team-harbour"})
        assert resp.status_code == 200 and "No such namespace" not in text(resp), url
