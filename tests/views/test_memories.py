"""Memory list (filters, pagination), detail, and the changes made from it."""

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from memories import services
from memories.models import Memory
from search.memory_search import memory_search
from tests.helpers import memory_hash
from tests.views.conftest import HX, attr_values, ids, tags, text

pytestmark = pytest.mark.django_db(transaction=True)

EMOJI = "🌱plants need water every 3 days🚿"


def row_ids(body) -> list[str]:
    return [a["data-memory-id"] for t, a in tags(body) if t == "tr" and "data-memory-id" in a]


def page_links(body) -> list[str]:
    """href and hx-get of every link inside the pagination nav."""
    out, inside = [], False
    for tag, a in tags(body):
        if tag == "nav":
            inside = "pagination" in a.get("class", "")
        elif inside and tag == "a":
            out += [a["href"], a["hx-get"]]
    return out


# --- list -------------------------------------------------------------------------------


def test_it_lists_memories_newest_first(viewer_client, make_memory):
    old = make_memory("an old fact", created_at=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    new = make_memory("a new fact")
    resp = viewer_client.get("/memories/")
    assert resp.status_code == 200 and "<html" in text(resp) and "memory-rows" in ids(resp.content)
    assert row_ids(resp.content) == [new.memory_id, old.memory_id]
    assert "an old fact" in text(resp) and "2 memories" in text(resp)


def test_it_filters(viewer_client, editor, make_memory):
    a = make_memory("Redis keeps the hot store", importance=0.9, conversation_id="c-1")
    b = make_memory("postgres keeps the truth", importance=0.2, type="working")
    c = make_memory("redis again, other user", user_id="u-b", importance=0.5)
    services.memory_forget(memory_id=c.memory_id, actor=editor)

    def listed(**params):
        resp = viewer_client.get("/memories/", params)
        assert resp.status_code == 200
        return set(row_ids(resp.content))

    assert listed(q="REDIS") == {a.memory_id, c.memory_id}  # case-insensitive substring
    assert listed(user_id="u-a") == {a.memory_id, b.memory_id}
    assert listed(conversation_id="c-1") == {a.memory_id}
    assert listed(type="working") == {b.memory_id}
    assert listed(importance_min="0.5") == {a.memory_id, c.memory_id}
    assert listed(importance_max="0.5") == {b.memory_id, c.memory_id}
    assert listed(state="forgotten") == {c.memory_id}
    assert listed(state="live", q="redis") == {a.memory_id}
    assert listed(q="nothing like this") == set()


@pytest.mark.parametrize(
    "params",
    [
        {"per_page": "5"},
        {"per_page": "101"},
        {"per_page": "ten"},
        {"importance_min": "2"},
        {"importance_min": "0.8", "importance_max": "0.2"},
        {"type": "forever"},
        {"user_id": " padded "},
    ],
)
def test_it_reports_bad_filters(viewer_client, params):
    resp = viewer_client.get("/memories/", params)
    assert resp.status_code == 400
    assert 'class="alert alert-error"' in text(resp) and row_ids(resp.content) == []


def test_pagination_keeps_every_filter_b31(viewer_client, make_memory):
    """Public case B31: 25 "redis" memories + 10 others, pages of 10: 10/10/5, 25 distinct
    ids in a stable order, and every page link (href and hx-get) carries q and type."""
    same_time = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)  # ties: the order falls back on id
    for n in range(25):
        make_memory(f"redis note {n}", created_at=same_time if n % 2 else None)
    for n in range(10):
        make_memory(f"postgres note {n}")
    params = {"q": "redis", "type": "long_term", "per_page": "10"}
    seen, sizes = [], []
    for page in (1, 2, 3):
        resp = viewer_client.get("/memories/", {**params, "page": page})
        assert resp.status_code == 200
        found = row_ids(resp.content)
        sizes.append(len(found))
        seen += found
        links = page_links(resp.content)
        assert links
        for link in links:
            query = parse_qs(urlsplit(link).query)
            assert urlsplit(link).path == "/memories/"
            assert query["q"] == ["redis"] and query["type"] == ["long_term"]
            assert query["per_page"] == ["10"] and len(query["page"]) == 1
    assert sizes == [10, 10, 5]
    assert len(set(seen)) == 25
    expected = list(
        Memory.objects.filter(content__contains="redis")
        .order_by("-created_at", "memory_id")
        .values_list("memory_id", flat=True)
    )
    assert seen == expected
    # The same pages through htmx: the fragment only, same rows.
    part = viewer_client.get("/memories/", {**params, "page": 2}, headers=HX)
    assert "<html" not in text(part) and text(part).lstrip().startswith('<div id="memory-rows">')
    assert row_ids(part.content) == seen[10:20]
    assert all("q=redis" in link for link in page_links(part.content))


def test_the_filter_form_targets_the_rows_fragment(viewer_client):
    forms = [
        a
        for t, a in tags(viewer_client.get("/memories/").content)
        if t == "form" and a.get("id") == "memory-filters"
    ]
    assert forms[0]["method"] == "get" and forms[0]["action"] == "/memories/"
    assert forms[0]["hx-get"] == "/memories/" and forms[0]["hx-target"] == "#memory-rows"
    assert forms[0]["hx-push-url"] == "true"


def test_list_query_count_is_pinned(viewer_client, make_memory, django_assert_num_queries):
    for n in range(30):
        make_memory(f"fact {n}", user_id=f"u-{n % 3}")
    # session, user, role groups; COUNT, one page of rows (no per-row query); the namespace
    # suggestions of the filter (the htmx fragment has none).
    with django_assert_num_queries(6):
        resp = viewer_client.get("/memories/", {"q": "fact"})
    assert len(row_ids(resp.content)) == 25  # the default page size
    with django_assert_num_queries(5):
        viewer_client.get("/memories/", {"page": "2"}, headers=HX)


# --- detail -----------------------------------------------------------------------------


def test_it_shows_a_memory(viewer_client, make_memory):
    m = make_memory(
        "use argon2 for password hashing",
        tags=["auth", "security"],
        metadata={"ticket": "SEC-12"},
        source="slack",
        author="ada",
        conversation_id="c-7",
        importance=0.4,
    )
    resp = viewer_client.get(f"/memories/{m.memory_id}/")
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body
    assert {"memory-panel", "memory-content", "memory-history", "memory-fields"} <= ids(body)
    for shown in [
        "use argon2 for password hashing",
        "auth",
        "security",
        "SEC-12",
        "slack",
        "c-7",
        "0.40",
        "create",
    ]:
        assert shown in body
    assert "version-1" in ids(body)
    # A viewer sees no edit controls.
    assert "importance-form" not in ids(body) and "state-form" not in ids(body)
    assert "needs the editor role" in body


def test_emoji_content_round_trips_byte_identical_b13(viewer_client, make_memory):
    """Public case B13: the 4-byte emoji survive the detail page and the search partial."""
    m = make_memory(EMOJI)
    assert memory_hash("u-a", m.memory_id)["content"].encode() == EMOJI.encode()
    page = viewer_client.get(f"/memories/{m.memory_id}/")
    assert page["Content-Type"] == "text/html; charset=utf-8"
    assert f'<div id="memory-content" class="content-block">{EMOJI}</div>'.encode() in page.content
    part = viewer_client.get("/search/", {"user_id": "u-a", "q": "plants"}, headers=HX)
    assert f'<div class="hit-content">{EMOJI}</div>'.encode() in part.content


def test_it_answers_404_for_an_unknown_memory(viewer_client):
    resp = viewer_client.get("/memories/mem_0123456789abcdef/")
    assert resp.status_code == 404 and "not-found" in ids(resp.content)
    assert viewer_client.get("/memories/not-an-id/").status_code == 404


def test_htmx_gets_the_panel_fragment(viewer_client, make_memory):
    m = make_memory()
    resp = viewer_client.get(f"/memories/{m.memory_id}/", headers=HX)
    assert resp.status_code == 200 and "<html" not in text(resp)
    assert text(resp).lstrip().startswith('<div id="memory-panel">')
    # An htmx history restore (cache miss) needs the whole page.
    full = viewer_client.get(
        f"/memories/{m.memory_id}/", headers={**HX, "HX-History-Restore-Request": "true"}
    )
    assert "<html" in text(full)


def test_history_strikes_through_forgotten_versions(viewer_client, editor, make_memory):
    m = make_memory("the wifi password is hunter2")
    services.memory_forget(memory_id=m.memory_id, actor=editor, reason="secret")
    services.memory_restore(memory_id=m.memory_id, actor=editor, reason="needed")
    rows = {
        a["id"]: a
        for t, a in tags(viewer_client.get(f"/memories/{m.memory_id}/").content)
        if t == "tr" and a.get("id", "").startswith("version-")
    }
    assert [rows[f"version-{v}"]["data-kind"] for v in (1, 2, 3)] == ["create", "forget", "restore"]
    assert "forgotten" in rows["version-2"].get("class", "")
    assert "forgotten" not in rows["version-1"].get("class", "")
    assert "forgotten" not in rows["version-3"].get("class", "")


def test_the_history_shows_a_content_diff(viewer_client, editor, make_memory):
    m = make_memory("Team lunch is at Cafe Lumen on Fridays")
    services.memory_update(
        memory_id=m.memory_id, actor=editor, content="Team lunch moved to Noodle Barn on Thursdays"
    )
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    assert "Team lunch <del>is at Cafe Lumen </del><ins>moved to Noodle Barn </ins>on " in body
    assert "<del>Fridays</del><ins>Thursdays</ins>" in body


# --- importance -------------------------------------------------------------------------


def test_inline_importance_edit_writes_an_importance_version(editor_client, make_memory):
    m = make_memory(importance=0.5)
    resp = editor_client.post(
        f"/memories/{m.memory_id}/importance/",
        {"importance": "0.85", "reason": "key fact", "version": "1"},
        headers=HX,
    )
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="memory-panel">')
    assert '<span class="big-number" id="importance-value">0.85</span>' in body
    assert 'id="version-2" data-kind="importance"' in body and "key fact" in body
    assert 'hx-swap-oob="true"' in body and "Importance set to 0.85" in body
    m.refresh_from_db()
    assert (m.importance, m.version) == (0.85, 2)
    last = m.history.order_by("-history_id").first()
    assert (last.kind, last.changed_by, last.history_change_reason) == (
        "importance",
        "eddie",
        "key fact",
    )
    assert memory_hash("u-a", m.memory_id)["importance"] == "0.85"  # mirror ran


def test_importance_edit_without_javascript_redirects_back(editor_client, make_memory):
    m = make_memory(importance=0.5)
    resp = editor_client.post(f"/memories/{m.memory_id}/importance/", {"importance": "0.3"})
    assert resp.status_code == 302 and resp["Location"] == f"/memories/{m.memory_id}/"
    page = editor_client.get(resp["Location"])
    assert "Importance set to 0.30 (version 2)." in text(page)
    assert Memory.objects.get(pk=m.memory_id).importance == 0.3


def test_the_importance_form_is_an_hx_post_number_input(editor_client, make_memory):
    m = make_memory()
    found = tags(editor_client.get(f"/memories/{m.memory_id}/").content)
    form = next(a for t, a in found if t == "form" and a.get("id") == "importance-form")
    assert form["hx-post"] == form["action"] == f"/memories/{m.memory_id}/importance/"
    assert form["hx-target"] == "#memory-panel" and form["method"] == "post"
    number = next(a for t, a in found if t == "input" and a.get("name") == "importance")
    assert (number["type"], number["min"], number["max"], number["step"]) == (
        "number",
        "0",
        "1",
        "any",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1.5", "less than or equal to 1"),
        ("-0.1", "greater than or equal to 0"),
        ("abc", "Enter a number"),
        ("", "This field is required"),
        ("nan", "Enter a number"),
    ],
)
def test_bad_importance_is_a_form_error(editor_client, make_memory, value, message):
    m = make_memory(importance=0.5)
    for headers in ({}, HX):
        resp = editor_client.post(
            f"/memories/{m.memory_id}/importance/", {"importance": value}, headers=headers
        )
        assert resp.status_code == 400
        assert 'class="field-error"' in text(resp) and message in text(resp)
        assert ("<html" in text(resp)) is not bool(headers)
    assert Memory.objects.get(pk=m.memory_id).version == 1


def test_a_stale_version_is_a_conflict_on_the_form(editor_client, editor, make_memory):
    m = make_memory(importance=0.5)
    services.memory_update(memory_id=m.memory_id, actor=editor, importance=0.6)
    resp = editor_client.post(
        f"/memories/{m.memory_id}/importance/", {"importance": "0.9", "version": "1"}, headers=HX
    )
    assert resp.status_code == 409 and "is at version 2, not 1" in text(resp)
    assert Memory.objects.get(pk=m.memory_id).importance == 0.6
    # The form now carries the current version and what the user typed: saving again works.
    hidden = [a for t, a in tags(resp.content) if a.get("name") in ("version", "importance")]
    assert {a["name"]: a["value"] for a in hidden} == {"version": "2", "importance": "0.9"}
    again = editor_client.post(
        f"/memories/{m.memory_id}/importance/", {"importance": "0.9", "version": "2"}, headers=HX
    )
    assert again.status_code == 200 and Memory.objects.get(pk=m.memory_id).importance == 0.9


def test_a_forgotten_memory_refuses_an_importance_edit(editor_client, editor, make_memory):
    m = make_memory()
    services.memory_forget(memory_id=m.memory_id, actor=editor)
    resp = editor_client.post(f"/memories/{m.memory_id}/importance/", {"importance": "0.9"})
    assert resp.status_code == 409 and "restore it first" in text(resp)


def test_a_viewer_cannot_edit_importance(viewer_client, make_memory):
    m = make_memory(importance=0.5)
    page = viewer_client.post(f"/memories/{m.memory_id}/importance/", {"importance": "0.9"})
    assert page.status_code == 403 and "<html" in text(page)
    assert "needs the editor role; your role is viewer" in text(page)
    part = viewer_client.post(
        f"/memories/{m.memory_id}/importance/", {"importance": "0.9"}, headers=HX
    )
    assert part.status_code == 403 and "<html" not in text(part) and len(part.content) < 400
    assert part["HX-Retarget"] == "#messages" and part["HX-Reswap"] == "innerHTML"
    m.refresh_from_db()
    assert (m.importance, m.version, m.history.count()) == (0.5, 1, 1)


def test_action_urls_refuse_get(editor_client, make_memory):
    m = make_memory()
    for action in ("importance", "forget", "restore", "rollback"):
        assert editor_client.get(f"/memories/{m.memory_id}/{action}/").status_code == 405


def test_an_action_on_an_unknown_memory_is_404(editor_client, admin_role_client):
    assert (
        editor_client.post(
            "/memories/mem_0123456789abcdef/importance/", {"importance": "0.5"}
        ).status_code
        == 404
    )
    assert (
        admin_role_client.post(
            "/memories/mem_0123456789abcdef/rollback/", {"version": "1", "reason": "x"}
        ).status_code
        == 404
    )


def test_anonymous_posts_go_to_login(make_memory):
    m = make_memory()
    resp = Client().post(f"/memories/{m.memory_id}/forget/")
    assert resp.status_code == 302 and resp["Location"].startswith("/accounts/login/")
    assert Memory.objects.get(pk=m.memory_id).deleted_at is None


# --- forget / restore -------------------------------------------------------------------


def test_forget_and_restore(editor_client, make_memory):
    m = make_memory("use argon2 for password hashing")
    resp = editor_client.post(
        f"/memories/{m.memory_id}/forget/", {"reason": "obsolete"}, headers=HX
    )
    assert resp.status_code == 200 and ">forgotten<" in text(resp)
    assert "Restore</button>" in text(resp) and "Memory forgotten (version 2)." in text(resp)
    assert memory_search(user_id="u-a", query="argon2").results == []
    again = editor_client.post(f"/memories/{m.memory_id}/forget/", {"reason": "twice"})
    assert again.status_code == 302 and Memory.objects.get(pk=m.memory_id).version == 2
    resp = editor_client.post(f"/memories/{m.memory_id}/restore/", {"reason": "still true"})
    assert resp.status_code == 302
    m.refresh_from_db()
    assert m.deleted_at is None and m.version == 3
    assert [h.kind for h in m.history.order_by("history_id")] == ["create", "forget", "restore"]
    assert [h.memory_id for h in memory_search(user_id="u-a", query="argon2").results] == [
        m.memory_id
    ]


def test_forget_reason_too_long_is_a_form_error(editor_client, make_memory):
    m = make_memory()
    resp = editor_client.post(f"/memories/{m.memory_id}/forget/", {"reason": "x" * 501})
    assert resp.status_code == 400 and "at most 500 characters" in text(resp)
    assert Memory.objects.get(pk=m.memory_id).deleted_at is None


def test_a_viewer_cannot_forget(viewer_client, make_memory):
    m = make_memory()
    resp = viewer_client.post(f"/memories/{m.memory_id}/forget/", headers=HX)
    assert resp.status_code == 403 and "<html" not in text(resp)
    assert Memory.objects.get(pk=m.memory_id).deleted_at is None


# --- rollback ---------------------------------------------------------------------------


def test_admin_rolls_back_to_a_version(admin_role_client, editor, make_memory):
    m = make_memory("Team lunch is at Cafe Lumen", importance=0.5)
    services.memory_update(memory_id=m.memory_id, actor=editor, content="Team lunch is at Noodle")
    page = text(admin_role_client.get(f"/memories/{m.memory_id}/"))
    assert 'id="rollback-form"' in page and '<option value="1">v1</option>' in page
    resp = admin_role_client.post(
        f"/memories/{m.memory_id}/rollback/", {"version": "1", "reason": "bad edit"}, headers=HX
    )
    assert resp.status_code == 200 and 'data-kind="rollback"' in text(resp)
    m.refresh_from_db()
    assert (m.content, m.version) == ("Team lunch is at Cafe Lumen", 3)
    assert [h.memory_id for h in memory_search(user_id="u-a", query="Lumen").results] == [
        m.memory_id
    ]


def test_a_rollback_needs_a_reason(admin_role_client, editor, make_memory):
    m = make_memory("first")
    services.memory_update(memory_id=m.memory_id, actor=editor, content="second")
    for headers in ({}, HX):
        resp = admin_role_client.post(
            f"/memories/{m.memory_id}/rollback/", {"version": "1", "reason": "  "}, headers=headers
        )
        assert resp.status_code == 400
        assert "A reason is required for a rollback." in text(resp)
        assert 'id="rollback-form"' in text(resp)
    assert Memory.objects.get(pk=m.memory_id).version == 2


def test_a_rollback_to_a_bad_version_is_a_form_error(admin_role_client, editor, make_memory):
    m = make_memory("first")
    services.memory_update(memory_id=m.memory_id, actor=editor, content="second")
    resp = admin_role_client.post(
        f"/memories/{m.memory_id}/rollback/", {"version": "2", "reason": "x"}
    )
    assert resp.status_code == 400 and "Version 2 holds no content to roll back to" in text(resp)


def test_the_rollback_offers_only_versions_that_hold_content(admin_role_client, editor, make_memory):
    m = make_memory("first")
    services.memory_update(memory_id=m.memory_id, actor=editor, content="second")  # v2
    services.memory_forget(memory_id=m.memory_id, actor=editor, reason="wrong")  # v3
    services.memory_restore(memory_id=m.memory_id, actor=editor, reason="right")  # v4
    services.memory_update(memory_id=m.memory_id, actor=editor, content="third")  # v5
    page = text(admin_role_client.get(f"/memories/{m.memory_id}/"))
    rollback_select = page.split('id="rollback_version"')[1].split("</select>")[0]
    assert [a["value"] for t, a in tags(rollback_select) if t == "option"] == ["2", "1"]
    # A marker version posted anyway is refused inline (the fragment, not a page).
    resp = admin_role_client.post(
        f"/memories/{m.memory_id}/rollback/", {"version": "3", "reason": "x"}, headers=HX
    )
    assert resp.status_code == 400 and "<html" not in text(resp)
    assert "Version 3 holds no content to roll back to" in text(resp)
    assert Memory.objects.get(pk=m.memory_id).version == 5


def test_an_editor_cannot_roll_back(editor_client, editor, make_memory):
    m = make_memory("first")
    services.memory_update(memory_id=m.memory_id, actor=editor, content="second")
    assert 'id="rollback-form"' not in text(editor_client.get(f"/memories/{m.memory_id}/"))
    resp = editor_client.post(f"/memories/{m.memory_id}/rollback/", {"version": "1", "reason": "x"})
    assert resp.status_code == 403 and "needs the admin role" in text(resp)
    assert Memory.objects.get(pk=m.memory_id).content == "second"


def test_service_errors_never_become_500(editor_client, make_memory, monkeypatch):
    """Whatever a service raises (ServiceError subclasses) is shown, with its status."""
    from memories.errors import TooLarge

    def refuse(**kwargs):
        raise TooLarge("importance too large for this test", field="importance")

    m = make_memory()
    monkeypatch.setattr("memories.services.memory_update", refuse)
    resp = editor_client.post(f"/memories/{m.memory_id}/importance/", {"importance": "0.5"})
    assert resp.status_code == 413 and "importance too large for this test" in text(resp)


def test_every_page_link_of_the_detail_page_works(viewer_client, make_memory):
    m = make_memory(conversation_id="c-1")
    body = viewer_client.get(f"/memories/{m.memory_id}/").content
    for href in attr_values(body, "href"):
        if href.startswith("/") and not href.startswith("/static/"):
            assert viewer_client.get(href).status_code == 200, href
