"""Memory list (filters, pagination), detail, and the changes made from it."""

import datetime as dt
import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils.timezone import localtime

from memories import services
from memories.models import Memory
from search.memory_search import memory_search
from tests.helpers import memory_hash
from tests.views.conftest import HX, attr_values, ids, tags, text

pytestmark = pytest.mark.django_db

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
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(7):
        resp = viewer_client.get("/memories/", {"q": "fact"})
    assert len(row_ids(resp.content)) == 25  # the default page size
    with django_assert_num_queries(5):
        viewer_client.get("/memories/", {"page": "2"}, headers=HX)


def listed(client, **params) -> list[str]:
    resp = client.get("/memories/", params)
    assert resp.status_code == 200, text(resp)
    return row_ids(resp.content)


def test_the_text_filter_matches_every_word_in_any_order(viewer_client, make_memory):
    phone = make_memory("Call the Oakridge office: phone 555-0100")
    make_memory("The Oakridge office moved to Elm Street")
    make_memory("A phone for the Lisbon team")
    wide = make_memory("ＯＡＫＲＩＤＧＥ's new ＰＨＯＮＥ line")  # NFKC + case folding, as before
    assert set(listed(viewer_client, q="Oakridge phone")) == {phone.memory_id, wide.memory_id}
    assert set(listed(viewer_client, q="PHONE  oakridge")) == {phone.memory_id, wide.memory_id}
    assert listed(viewer_client, q="oakridge phone lisbon") == []


def test_it_filters_by_author_tags_and_namespace(viewer_client, make_memory):
    a = make_memory("one", author="agent-7", tags=["billing", "eu"])
    b = make_memory("two", author="agent-7", tags=["billing"], user_id="u-b")
    c = make_memory("three", author="agent-9", tags=["eu", "billing", "vip"])
    assert set(listed(viewer_client, author="agent-7")) == {a.memory_id, b.memory_id}
    assert set(listed(viewer_client, tags="billing")) == {a.memory_id, b.memory_id, c.memory_id}
    assert set(listed(viewer_client, tags="eu, billing")) == {a.memory_id, c.memory_id}
    assert listed(viewer_client, tags="eu,vip,billing") == [c.memory_id]
    assert listed(viewer_client, tags="bill") == []  # a whole tag, not a part of one
    assert listed(viewer_client, user_id="u-b") == [b.memory_id]
    assert listed(viewer_client, author="agent-7", tags="eu", user_id="u-a") == [a.memory_id]


def test_it_filters_by_created_and_updated_day_ranges(viewer_client, make_memory):
    day = dt.datetime(2025, 3, 10, 12, tzinfo=dt.UTC)
    early = make_memory("early", created_at=day - dt.timedelta(days=5))
    mid = make_memory("mid", created_at=day)
    late = make_memory("late", created_at=day + dt.timedelta(days=5))
    # Set the update dates directly: a service stamps "now", and the filter reads the column.
    for m, when in ((early, day), (mid, day + dt.timedelta(days=20)), (late, day)):
        Memory.objects.filter(pk=m.pk).update(updated_at=when)
    assert set(listed(viewer_client, created_from="2025-03-10")) == {mid.memory_id, late.memory_id}
    assert set(listed(viewer_client, created_to="2025-03-10")) == {early.memory_id, mid.memory_id}
    assert listed(viewer_client, created_from="2025-03-10", created_to="2025-03-10") == [mid.memory_id]
    assert set(listed(viewer_client, updated_to="2025-03-10")) == {early.memory_id, late.memory_id}
    assert listed(viewer_client, updated_from="2025-03-11") == [mid.memory_id]
    assert listed(viewer_client, updated_from="2025-03-01", created_from="2025-03-11",
                  importance_min="0") == [late.memory_id]


@pytest.mark.parametrize("low, high", [("created_from", "created_to"),
                                       ("updated_from", "updated_to")])
def test_a_date_range_ending_before_it_starts_is_a_form_error(viewer_client, low, high):
    resp = viewer_client.get("/memories/", {low: "2025-03-10", high: "2025-03-09"})
    assert resp.status_code == 400 and "Must be on or after the first day." in text(resp)


def test_every_filter_survives_the_url_round_trip(viewer_client, make_memory):
    """The form shows back every filter of the URL, and every page link carries them all."""
    for n in range(12):
        make_memory(f"redis note {n}", author="agent-7", tags=["ops"], importance=0.6,
                    created_at=dt.datetime(2025, 3, 10, n, tzinfo=dt.UTC))
    params = {"q": "redis note", "user_id": "u-a", "author": "agent-7", "tags": "ops",
              "type": "long_term", "state": "live", "created_from": "2025-03-01",
              "created_to": "2025-03-31", "updated_from": "2000-01-01",
              "updated_to": "2999-12-31", "importance_min": "0.5", "importance_max": "0.7",
              "per_page": "10"}
    resp = viewer_client.get("/memories/", params)
    assert len(row_ids(resp.content)) == 10
    inputs = {a["name"]: a.get("value", "") for t, a in tags(resp.content)
              if t == "input" and a.get("name") in params}
    selects = text(resp)
    assert {k: v for k, v in inputs.items()} == {k: v for k, v in params.items()
                                                  if k not in ("type", "state")}
    assert '<option value="live" selected>' in selects
    assert '<option value="long_term" selected>' in selects
    for link in page_links(resp.content):
        query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
        assert query.pop("page") and query == params
    assert len(listed(viewer_client, **params, page="2")) == 2


def test_a_namespace_and_text_offer_to_rank_them_in_search(viewer_client, make_memory):
    make_memory("Oakridge phone 555-0100")
    resp = viewer_client.get("/memories/", {"q": "Oakridge phone", "user_id": "u-a"})
    links = [a["href"] for t, a in tags(resp.content) if a.get("id") == "rank-in-search"]
    assert links == ["/search/?user_id=u-a&q=Oakridge+phone"]
    assert viewer_client.get(links[0]).status_code == 200
    for params in ({"q": "Oakridge phone"}, {"user_id": "u-a"}):
        assert "rank-in-search" not in ids(viewer_client.get("/memories/", params).content)


def test_the_forgotten_state_says_when_by_whom_and_why_newest_forgotten_first(
        viewer_client, editor, make_memory, django_assert_num_queries):
    first = make_memory("forgotten first, created last",
                        created_at=dt.datetime(2025, 5, 1, tzinfo=dt.UTC))
    second = make_memory("forgotten second, created first",
                         created_at=dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
    make_memory("still live")
    services.memory_forget(memory_id=first.memory_id, actor=editor, reason="outdated address")
    # Forgotten, restored, forgotten again: the reason shown is the one it is forgotten with now.
    services.memory_forget(memory_id=second.memory_id, actor="cleanup-job", reason="")
    services.memory_restore(memory_id=second.memory_id, actor=editor, reason="oops")
    services.memory_forget(memory_id=second.memory_id, actor=editor, reason="duplicate of another")
    # session, user, role groups; COUNT, the page, the reasons; the namespace suggestions.
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(8):
        resp = viewer_client.get("/memories/", {"state": "forgotten"})
    assert row_ids(resp.content) == [second.memory_id, first.memory_id]
    body = text(resp)
    when = localtime(Memory.objects.get(pk=first.pk).deleted_at).strftime("%Y-%m-%d %H:%M")
    assert f"{when}</time> by eddie: “outdated address”" in body
    assert "by eddie: “duplicate of another”" in body and "oops" not in body


def test_a_forgotten_memory_without_a_reason_says_so(viewer_client, make_memory):
    m = make_memory("no reason")
    services.memory_forget(memory_id=m.memory_id, actor="policy")
    assert "by policy (no reason given)" in text(viewer_client.get("/memories/"))


# --- new memory -------------------------------------------------------------------------


def _field_block(body: str, field: str) -> str:
    """The <p> of the new-memory form holding ``field``'s input and its errors."""
    match = re.search(rf'<p><label for="id_{field}">.*?</p>', body, re.S)
    assert match, field
    return match.group(0)


NEW = {"user_id": "u-new", "conversation_id": "", "type": "long_term",
       "content": "The Oakridge office phone is 555-0100", "tags": "office, phone",
       "importance": "0.8", "metadata": '{"source": "front desk"}'}


def test_the_list_links_editors_to_a_new_memory_form(editor_client, viewer_client,
                                                     make_memory):
    make_memory("an existing namespace", user_id="u-seen")
    assert attr_values(editor_client.get("/memories/").content, "href").count("/memories/new/") == 1
    assert "new-memory" not in ids(viewer_client.get("/memories/").content)
    body = text(editor_client.get("/memories/new/"))
    inputs = {a.get("name"): a for t, a in tags(body) if t in ("input", "textarea", "select")}
    assert inputs["user_id"]["list"] == "namespaces" and inputs["user_id"]["type"] == "text"
    assert {"conversation_id", "type", "content", "tags", "importance", "metadata"} <= set(inputs)
    assert '<option value="u-seen">' in body  # the datalist suggests existing namespaces
    form = [a for t, a in tags(body) if t == "form" and a.get("id") == "new-memory-form"][0]
    assert form["method"] == "post" and form["action"] == "/memories/new/"


def test_a_new_memory_is_written_by_the_service_and_its_page_opens(editor_client):
    resp = editor_client.post("/memories/new/", NEW)
    m = Memory.objects.get(user_id="u-new")
    assert resp.status_code == 302 and resp["Location"] == f"/memories/{m.memory_id}/"
    assert (m.content, m.tags, m.importance, m.metadata, m.conversation_id) == (
        NEW["content"], ["office", "phone"], 0.8, {"source": "front desk"}, None)
    first = m.history.get()
    assert (first.kind, first.changed_by) == ("create", "eddie")
    page = editor_client.get(resp["Location"])
    assert "Memory created." in text(page)
    found = memory_search(user_id="u-new", query="Oakridge phone").results
    assert [r.memory_id for r in found] == [m.memory_id]


def test_a_new_memory_in_a_conversation_with_an_estimated_importance(editor_client):
    resp = editor_client.post("/memories/new/", {**NEW, "conversation_id": "c-9",
                                                 "importance": "", "metadata": "",
                                                 "type": "working"})
    m = Memory.objects.get(user_id="u-new")
    assert resp.status_code == 302
    assert (m.conversation_id, m.type, m.metadata) == ("c-9", "working", {})
    assert 0 <= m.importance <= 1


def test_the_same_memory_twice_opens_the_existing_one(editor_client):
    first = editor_client.post("/memories/new/", NEW)
    again = editor_client.post("/memories/new/", NEW)
    assert again["Location"] == first["Location"] and Memory.objects.count() == 1
    assert "nothing new was written" in text(editor_client.get(again["Location"]))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("user_id", "", "This field is required."),
        ("user_id", " padded", "user_id"),
        ("conversation_id", "x" * 129, "at most 128 characters"),
        ("content", "", "This field is required."),
        ("content", "   ", "content must not be blank"),  # the service's check, on its field
        ("tags", "ok, " + "t" * 65, "tags items must be non-blank strings of at most 64"),
        ("importance", "2", "less than or equal to 1"),
        ("metadata", "{not json", "Not valid JSON"),
        ("metadata", "[1, 2]", "Metadata must be a JSON object"),
        ("type", "forever", "Select a valid choice"),
    ],
)
def test_each_new_memory_error_shows_on_its_field(editor_client, field, value, message):
    resp = editor_client.post("/memories/new/", {**NEW, field: value})
    assert resp.status_code == 400
    block = _field_block(text(resp), field)
    assert 'class="field-error"' in block and message in html.unescape(block)
    assert Memory.objects.count() == 0
    if field != "content":  # what was typed is kept
        assert html.escape(NEW["content"]) in text(resp)


def test_a_viewer_gets_the_role_refusal_for_a_new_memory(viewer_client):
    for resp in (viewer_client.get("/memories/new/"), viewer_client.post("/memories/new/", NEW)):
        assert resp.status_code == 403 and "This needs the editor role" in text(resp)
    assert Memory.objects.count() == 0


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


def _long_text(seed: str) -> str:
    """About 10,000 characters of distinct words (``seed`` sets them apart)."""
    return " ".join(f"{seed}{n} word{n}." for n in range(800))


def test_the_history_folds_long_versions_to_what_changed(viewer_client, editor, make_memory):
    text_v1 = _long_text("w")
    m = make_memory(text_v1)
    text_v2 = text_v1.replace("w400 word400.", "w400 CHANGED400.")
    text_v3 = text_v2.replace("w10 word10.", "w10 EARLY10.")
    text_v4 = text_v3 + " A closing line."
    for content in (text_v2, text_v3, text_v4):
        services.memory_update(memory_id=m.memory_id, actor=editor, content=content)
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    history = body[body.index('id="memory-history"'):]
    diffs = re.findall(r'<div class="diff">(.*?)</div>', history, re.S)
    assert len(diffs) == 3 and all(len(d) < 800 for d in diffs)
    assert "w400 <del>word400</del><ins>CHANGED400</ins>" in html.unescape(diffs[2])
    assert diffs[2].count("diff-gap") == 2  # unchanged text before and after it, left out
    assert "word799<ins>. A closing line</ins>." in diffs[0] and diffs[0].count("diff-gap") == 1
    # Each version's full text, on demand (a closed <details>), and the diff page linked.
    full = re.findall(r'<details class="version-text"><summary class="small">Full text of '
                      r'v(\d)</summary><div class="content-block">(.*?)</div></details>',
                      history, re.S)
    assert [(v, html.unescape(t)) for v, t in full] == [
        ("4", text_v4), ("3", text_v3), ("2", text_v2), ("1", text_v1)]
    assert f"/memories/{m.memory_id}/diff/?a=3&amp;b=4" in history


def test_a_short_edit_keeps_its_whole_word_diff(viewer_client, editor, make_memory):
    m = make_memory("Team lunch is at Cafe Lumen on Fridays")
    services.memory_update(memory_id=m.memory_id, actor=editor,
                           content="Team lunch is at Cafe Lumen on Thursdays")
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    assert ('<div class="diff">Team lunch is at Cafe Lumen on <del>Fridays</del>'
            "<ins>Thursdays</ins></div>") in body and "diff-gap" not in body


def test_the_page_is_titled_by_the_start_of_the_content(viewer_client, make_memory):
    m = make_memory("The Oakridge office\n\nphone is 555-0100, ask for the front desk after nine")
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    start = "The Oakridge office phone is 555-0100, ask for the front de…"
    assert f"<title>{start} · Memory Console</title>" in body
    assert f'<h1 id="memory-headline">{start}</h1>' in body
    assert f'<span class="mono" id="memory-id">{m.memory_id}</span>' in body
    short = make_memory("Deploys run on Tuesdays")
    assert "<title>Deploys run on Tuesdays · Memory Console</title>" in text(
        viewer_client.get(f"/memories/{short.memory_id}/"))


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
