"""The recall page: form, ranked results with their explanation, empty and error states."""

import pytest
import redis

from memories.models import Memory
from search.models import RankingProfile
from tests.views.conftest import HX, attr_values, ids, tags, text

pytestmark = pytest.mark.django_db


def hit_ids(body) -> list[str]:
    return [a["data-memory-id"] for t, a in tags(body) if t == "tr" and "data-memory-id" in a]


def test_it_shows_the_form_first(viewer_client, make_memory):
    make_memory(user_id="alice@example.com")
    resp = viewer_client.get("/search/")
    body = text(resp)
    assert resp.status_code == 200 and {"search-form", "results", "namespaces"} <= ids(body)
    assert "Choose a user" in body and '<option value="alice@example.com">' in body
    profiles = set(RankingProfile.objects.values_list("name", flat=True))
    options = {a["value"] for t, a in tags(body) if t == "option" and "value" in a}
    assert profiles <= options


def test_it_recalls_with_scores_and_explanations(viewer_client, make_memory):
    m1 = make_memory("use argon2 for password hashing")
    m2 = make_memory("password reset links expire in 30 minutes")
    make_memory("the cafeteria opens at nine")
    resp = viewer_client.get(
        "/search/", {"user_id": "u-a", "q": "argon2 password", "profile": "bm25", "limit": "5"}
    )
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body
    assert hit_ids(body) == [m1.memory_id, m2.memory_id]
    assert f'href="/memories/{m1.memory_id}/"' in body
    assert "argon2 <b>" in body and "password <b>" in body  # per-term contributions
    assert "profile <span" in body and ">bm25<" in body and "2 results" in body


def test_the_limit_and_profile_apply(viewer_client, make_memory):
    for n in range(4):
        make_memory(f"password note {n}")
    resp = viewer_client.get(
        "/search/", {"user_id": "u-a", "q": "password", "limit": "2", "profile": "keyword"}
    )
    assert len(hit_ids(resp.content)) == 2 and ">keyword<" in text(resp)


def test_htmx_gets_the_results_fragment(viewer_client, make_memory):
    m = make_memory()
    resp = viewer_client.get("/search/", {"user_id": "u-a", "q": "argon2"}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="results">') and hit_ids(body) == [m.memory_id]
    assert "HX-Request" in resp["Vary"]


def test_an_empty_namespace_shows_no_results_b09c(viewer_client, make_memory):
    """Public case B09 (c): the recall partial renders the "no results" state."""
    make_memory("🙂🙂", user_id="u-emoji")
    for user_id in ("u-new", "u-emoji"):
        resp = viewer_client.get("/search/", {"user_id": user_id, "q": "hello"}, headers=HX)
        assert resp.status_code == 200 and "<html" not in text(resp)
        assert "no-results" in ids(resp.content) and "No results" in text(resp)


def test_a_query_without_terms_shows_no_results(viewer_client, make_memory):
    make_memory()
    resp = viewer_client.get("/search/", {"user_id": "u-a", "q": "the and of 🌱"})
    assert resp.status_code == 200 and "no searchable terms" in text(resp)
    resp = viewer_client.get("/search/", {"user_id": "u-a", "q": ""})
    assert resp.status_code == 200 and "No results" in text(resp)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "x"}, "This field is required"),
        ({"user_id": " padded", "q": "x"}, "must not start or end with white space"),
        ({"user_id": "u-a", "q": "x", "limit": "0"}, "greater than or equal to 1"),
        ({"user_id": "u-a", "q": "x", "limit": "101"}, "less than or equal to 100"),
        ({"user_id": "u-a", "q": "x", "profile": "nope"}, "Select a valid choice"),
    ],
)
def test_bad_input_is_a_form_error(viewer_client, builtins, params, message):
    for headers in ({}, HX):
        resp = viewer_client.get("/search/", params, headers=headers)
        assert resp.status_code == 400 and message in text(resp)
        assert "alert-error" in text(resp)


def test_a_profile_deleted_meanwhile_is_a_form_error(viewer_client, make_memory, monkeypatch):
    from memories.errors import NotFound

    def gone(**kwargs):
        raise NotFound("profile 'tuned' not found", field="profile")

    make_memory()
    monkeypatch.setattr("recalls.act.memory_search", gone)
    resp = viewer_client.get("/search/", {"user_id": "u-a", "q": "argon2"})
    assert resp.status_code == 404 and "profile &#x27;tuned&#x27; not found" in text(resp)


def test_redis_down_is_an_error_message_not_a_500(viewer_client, make_memory, monkeypatch):
    make_memory()
    dead = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    monkeypatch.setattr("memories.store.get_client", lambda: dead)
    for headers in ({}, HX):
        resp = viewer_client.get("/search/", {"user_id": "u-a", "q": "argon2"}, headers=headers)
        assert resp.status_code == 503
        assert "The search index (Redis) is unreachable" in text(resp)
    page = viewer_client.get("/search/", {"user_id": "u-a", "q": "argon2"})
    assert "redis-banner" in ids(page.content)


def test_search_does_not_bump_access_counts(viewer_client, make_memory):
    """A reviewer's audit must not change what the agents' recency ranking sees."""
    m = make_memory()
    viewer_client.get("/search/", {"user_id": "u-a", "q": "argon2"})
    assert Memory.objects.get(pk=m.memory_id).access_count == 0


def test_search_is_get_only(viewer_client, builtins):
    assert viewer_client.post("/search/", {"user_id": "u-a", "q": "x"}).status_code == 405


def test_the_form_targets_the_results_fragment(viewer_client, builtins):
    body = viewer_client.get("/search/").content
    form = next(a for t, a in tags(body) if t == "form" and a.get("id") == "search-form")
    assert (form["method"], form["action"], form["hx-get"], form["hx-target"]) == (
        "get",
        "/search/",
        "/search/",
        "#results",
    )
    assert "/search/" in attr_values(viewer_client.get("/").content, "hx-get")  # quick recall


def test_search_query_count_is_pinned(viewer_client, make_memory, django_assert_num_queries):
    for n in range(5):
        make_memory(f"password note {n}")
    # session, user, role groups; the profile choices; the profile itself (memory_search);
    # the hits checked against the database (search.pending) with the window's embeddings in
    # the same query (the default profile rescores semantically: search.embeddings). The
    # namespace's first recall also checks that its index is whole (search.index_lost).
    for queries in (7, 6):
        with django_assert_num_queries(queries):
            resp = viewer_client.get("/search/", {"user_id": "u-a", "q": "password"},
                                     headers=HX)
        assert len(hit_ids(resp.content)) == 5


def test_the_profile_select_shows_the_default_when_none_is_asked(viewer_client):
    """Bug: the select showed its first option (bm25) while the default profile ran."""
    body = viewer_client.get("/search/?user_id=u-a&q=anything").content.decode()
    assert '<option value="context" selected>' in body
