"""Memory detail additions (diff of any two versions, purge with a typed confirmation,
promote, the importance estimate) and bulk actions in the list."""

import pytest

from memories import services
from memories.models import AuditEvent, Memory
from search.memory_search import memory_search
from tests.helpers import memory_hash
from tests.views.conftest import HX, attr_values, ids, tags, text

# The PostgreSQL pass runs these (scripts/test -m postgres): purge under row locks.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def row_ids(body) -> list[str]:
    return [a["data-memory-id"] for t, a in tags(body) if t == "tr" and "data-memory-id" in a]


def field_rows(body) -> dict[str, str]:
    return {a["data-field"]: a.get("class", "") for t, a in tags(body) if "data-field" in a}


@pytest.fixture
def three_versions(editor, make_memory):
    m = make_memory("Team lunch is at Cafe Lumen on Fridays", importance=0.5, tags=["food"])
    services.memory_update(memory_id=m.memory_id, actor=editor, importance=0.8, reason="key")
    services.memory_update(
        memory_id=m.memory_id,
        actor=editor,
        content="Team lunch moved to Noodle Barn on Thursdays",
        tags=["food", "team"],
        reason="moved",
    )
    return m


# --- diff ---------------------------------------------------------------------------------


def test_it_diffs_any_two_versions(viewer_client, three_versions):
    m = three_versions
    resp = viewer_client.get(f"/memories/{m.memory_id}/diff/", {"a": "1", "b": "3"})
    body = text(resp)
    assert (
        resp.status_code == 200 and "<html" in body and {"content-diff", "field-diff"} <= ids(body)
    )
    assert "Team lunch <del>is at Cafe Lumen </del><ins>moved to Noodle Barn </ins>on " in body
    assert "<del>Fridays</del><ins>Thursdays</ins>" in body
    rows = field_rows(body)
    assert rows["Importance"] == "changed" and rows["Tags"] == "changed"
    assert rows["Kind"] == "changed" and rows["Source"] == ""  # unchanged fields side by side
    importance = body[body.index('data-field="Importance"') :]
    # v1 then v3, each value labelled with its version for the phone's stacked cards
    assert importance.index('<td data-label="v1">0.5</td>') < importance.index(
        '<td data-label="v3">0.8</td>'
    )
    assert "moved" in body  # v3's reason
    # The version pickers show what was compared.
    selected = [a["value"] for t, a in tags(body) if t == "option" and "selected" in a]
    assert selected == ["1", "3"]


def test_the_diff_works_backwards_and_defaults_to_the_last_change(viewer_client, three_versions):
    m = three_versions
    back = text(viewer_client.get(f"/memories/{m.memory_id}/diff/", {"a": "3", "b": "1"}))
    assert "<del>Thursdays</del><ins>Fridays</ins>" in back
    last = text(viewer_client.get(f"/memories/{m.memory_id}/diff/"))  # v2 -> v3
    assert "<del>Fridays</del><ins>Thursdays</ins>" in last and "v2 → v3" in last
    same = text(viewer_client.get(f"/memories/{m.memory_id}/diff/", {"a": "2", "b": "2"}))
    assert "content-same" in ids(same) and "<del>" not in same


def test_htmx_gets_the_diff_fragment(viewer_client, three_versions):
    resp = viewer_client.get(
        f"/memories/{three_versions.memory_id}/diff/", {"a": "1", "b": "2"}, headers=HX
    )
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="diff">') and "HX-Request" in resp["Vary"]


@pytest.mark.parametrize(
    ("params", "message"),
    [({"a": "9", "b": "1"}, "Version 9 does not exist"), ({"a": "x", "b": "1"}, "Version x")],
)
def test_a_bad_version_is_a_form_error(viewer_client, three_versions, params, message):
    resp = viewer_client.get(f"/memories/{three_versions.memory_id}/diff/", params)
    assert resp.status_code == 400 and message in text(resp) and "alert-error" in text(resp)


def test_diff_404_and_405(viewer_client, three_versions):
    assert viewer_client.get("/memories/mem_0123456789abcdef/diff/").status_code == 404
    assert viewer_client.post(f"/memories/{three_versions.memory_id}/diff/").status_code == 405


def test_the_detail_page_links_to_diffs(viewer_client, three_versions):
    body = text(viewer_client.get(f"/memories/{three_versions.memory_id}/"))
    form = next(a for t, a in tags(body) if t == "form" and a.get("id") == "compare-form")
    assert (
        form["method"] == "get" and form["action"] == f"/memories/{three_versions.memory_id}/diff/"
    )
    assert f"/memories/{three_versions.memory_id}/diff/?a=2&b=3" in attr_values(body, "href")


# --- importance estimate --------------------------------------------------------------------


def test_the_details_show_the_importance_estimate(viewer_client, make_memory):
    m = make_memory("Important: the deadline is 2025-03-01", importance=0.2, author="ada")
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    assert "importance-estimate" in ids(body)
    parts = [a["data-part"] for t, a in tags(body) if "data-part" in a]
    assert parts == ["base", "emphasis", "date", "facts"]
    # base 0.4 + emphasis 0.2 (important, deadline) + date 0.1 + facts 0.1
    assert "<b>0.80</b>" in body and "+0.20" in body


# --- promote --------------------------------------------------------------------------------


def test_an_editor_promotes_a_working_memory(editor_client, make_memory):
    m = make_memory("the build cache lives in /var/cache/ci", type="working", conversation_id="c-1")
    page = text(editor_client.get(f"/memories/{m.memory_id}/"))
    assert "promote-form" in ids(page)
    resp = editor_client.post(f"/memories/{m.memory_id}/promote/", {"reason": "useful"})
    new = Memory.objects.exclude(pk=m.memory_id).get()
    assert resp.status_code == 302 and resp["Location"] == f"/memories/{new.memory_id}/"
    assert (new.type, new.conversation_id, new.metadata["promoted_from"]) == (
        "long_term",
        None,
        m.memory_id,
    )
    assert new.history.get().kind == "promote"
    landed = text(editor_client.get(resp["Location"]))
    assert f"Promoted {m.memory_id}" in landed and "promote-form" not in ids(landed)
    # A second promotion finds the same long-term memory (dedup), through htmx.
    again = editor_client.post(f"/memories/{m.memory_id}/promote/", headers=HX)
    assert again.status_code == 200 and again["HX-Redirect"] == f"/memories/{new.memory_id}/"
    assert Memory.objects.count() == 2


def test_a_user_wide_long_term_memory_cannot_be_promoted(editor_client, make_memory):
    m = make_memory("already long term")
    assert "promote-form" not in ids(editor_client.get(f"/memories/{m.memory_id}/").content)
    resp = editor_client.post(f"/memories/{m.memory_id}/promote/")
    assert resp.status_code == 400 and "already a user-wide long-term memory" in text(resp)
    assert Memory.objects.count() == 1


def test_a_viewer_cannot_promote(viewer_client, make_memory):
    m = make_memory("scratch", type="working")
    resp = viewer_client.post(f"/memories/{m.memory_id}/promote/", headers=HX)
    assert resp.status_code == 403 and "needs the editor role" in text(resp)
    assert Memory.objects.count() == 1
    assert viewer_client.get(f"/memories/{m.memory_id}/promote/").status_code in (403, 405)
    assert viewer_client.post("/memories/mem_0123456789abcdef/promote/").status_code == 403


def test_promote_404_and_405(editor_client, make_memory):
    m = make_memory("scratch", type="working")
    assert editor_client.post("/memories/mem_0123456789abcdef/promote/").status_code == 404
    assert editor_client.get(f"/memories/{m.memory_id}/promote/").status_code == 405


# --- purge ----------------------------------------------------------------------------------


def test_an_admin_purges_after_typing_purge(admin_role_client, three_versions):
    m = three_versions
    detail = text(admin_role_client.get(f"/memories/{m.memory_id}/"))
    assert f'href="/memories/{m.memory_id}/purge/"' in detail
    confirm = admin_role_client.get(f"/memories/{m.memory_id}/purge/")
    body = text(confirm)
    assert confirm.status_code == 200 and "purge-form" in ids(body) and "3 versions" in body
    resp = admin_role_client.post(
        f"/memories/{m.memory_id}/purge/", {"confirm": "purge", "reason": "gdpr request"}
    )
    assert resp.status_code == 302 and resp["Location"] == "/memories/?user_id=u-a"
    assert not Memory.objects.filter(pk=m.memory_id).exists()
    assert not Memory.history.filter(memory_id=m.memory_id).exists()
    assert memory_hash("u-a", m.memory_id) == {}
    event = AuditEvent.objects.get(action="purge")
    assert (event.actor, event.target, event.reason) == ("ada", m.memory_id, "gdpr request")
    assert "Noodle" not in str(event.data) and "Lumen" not in str(event.data)
    listing = text(admin_role_client.get(resp["Location"]))
    assert f"Purged {m.memory_id} and its 3 versions" in listing
    assert admin_role_client.get(f"/memories/{m.memory_id}/").status_code == 404


@pytest.mark.parametrize("typed", ["", "yes", "PURGE!", "purge it"])
def test_purge_needs_the_typed_word(admin_role_client, three_versions, typed):
    m = three_versions
    resp = admin_role_client.post(f"/memories/{m.memory_id}/purge/", {"confirm": typed})
    assert resp.status_code == 400 and "alert-error" in text(resp)
    assert Memory.objects.filter(pk=m.memory_id).exists() and not AuditEvent.objects.exists()


def test_purge_through_htmx_redirects_the_window(admin_role_client, make_memory):
    m = make_memory("gone soon")
    resp = admin_role_client.post(
        f"/memories/{m.memory_id}/purge/", {"confirm": "purge"}, headers=HX
    )
    assert resp.status_code == 200 and resp["HX-Redirect"] == "/memories/?user_id=u-a"


@pytest.mark.parametrize("client_name", ["viewer_client", "editor_client"])
def test_only_admins_purge(request, client_name, make_memory):
    client = request.getfixturevalue(client_name)
    m = make_memory("keep me")
    assert "purge-link" not in ids(client.get(f"/memories/{m.memory_id}/").content)
    assert client.get(f"/memories/{m.memory_id}/purge/").status_code == 403
    resp = client.post(f"/memories/{m.memory_id}/purge/", {"confirm": "purge"})
    assert resp.status_code == 403 and "needs the admin role" in text(resp)
    assert Memory.objects.filter(pk=m.memory_id).exists() and not AuditEvent.objects.exists()


def test_purge_404_and_405(admin_role_client, make_memory):
    m = make_memory("x")
    assert admin_role_client.get("/memories/mem_0123456789abcdef/purge/").status_code == 404
    assert admin_role_client.put(f"/memories/{m.memory_id}/purge/").status_code == 405


# --- bulk actions ---------------------------------------------------------------------------


@pytest.fixture
def five(make_memory):
    return [make_memory(f"bulk fact {n}", importance=0.5) for n in range(5)]


def test_the_list_has_checkboxes_for_editors_only(editor_client, viewer_client, five):
    body = text(editor_client.get("/memories/"))
    assert {"bulk-form", "select-all"} <= ids(body)
    boxes = [a["value"] for t, a in tags(body) if t == "input" and a.get("name") == "memory_ids"]
    assert sorted(boxes) == sorted(m.memory_id for m in five)
    form = next(a for t, a in tags(body) if t == "form" and a.get("id") == "bulk-form")
    assert form["hx-post"] == form["action"] == "/memories/bulk/"
    assert form["hx-target"] == "#memory-rows"
    assert "bulk-form" not in ids(viewer_client.get("/memories/").content)


def test_bulk_forget_records_a_version_per_memory(editor_client, five):
    chosen = [m.memory_id for m in five[:3]]
    resp = editor_client.post(
        "/memories/bulk/",
        {"memory_ids": chosen, "action": "forget", "reason": "duplicates", "back": "q=bulk"},
        headers=HX,
    )
    body = text(resp)
    assert resp.status_code == 200 and body.lstrip().startswith('<div id="memory-rows">')
    assert 'hx-swap-oob="true"' in body and "Forgot 3 memories." in body
    assert len(row_ids(body)) == 5  # the same list (q=bulk) re-rendered
    for m in five:
        m.refresh_from_db()
        last = m.history.order_by("-history_id").first()
        if m.memory_id in chosen:
            assert m.is_forgotten and (last.kind, last.history_change_reason) == (
                "forget",
                "duplicates",
            )
        else:
            assert not m.is_forgotten and m.version == 1
    assert memory_search(user_id="u-a", query="bulk", limit=10).results.__len__() == 2


def test_bulk_importance_then_restore_without_javascript(editor_client, editor, five):
    chosen = [m.memory_id for m in five[:2]]
    resp = editor_client.post(
        "/memories/bulk/",
        {
            "memory_ids": chosen,
            "action": "importance",
            "importance": "0.9",
            "back": "q=bulk&per_page=10&page=1",
        },
    )
    assert resp.status_code == 302 and resp["Location"] == "/memories/?q=bulk&per_page=10&page=1"
    assert "Importance set to 0.90 on 2 memories." in text(editor_client.get(resp["Location"]))
    assert {m.importance for m in Memory.objects.filter(pk__in=chosen)} == {0.9}
    assert [h.kind for h in Memory.objects.get(pk=chosen[0]).history.order_by("history_id")] == [
        "create",
        "importance",
    ]
    services.memory_forget(memory_id=chosen[0], actor=editor)
    again = editor_client.post(
        "/memories/bulk/", {"memory_ids": chosen, "action": "restore"}, headers=HX
    )
    assert "Restored 1 memory (1 already live)." in text(again)
    assert Memory.objects.filter(pk__in=chosen, deleted_at__isnull=True).count() == 2


def test_a_bulk_action_is_all_or_nothing(editor_client, editor, five):
    services.memory_forget(memory_id=five[1].memory_id, actor=editor)
    resp = editor_client.post(
        "/memories/bulk/",
        {
            "memory_ids": [five[0].memory_id, five[1].memory_id],
            "action": "importance",
            "importance": "0.1",
        },
        headers=HX,
    )
    assert resp.status_code == 409 and "restore it first" in text(resp)
    assert Memory.objects.get(pk=five[0].memory_id).importance == 0.5  # not half done
    # The selection survives the error.
    checked = [a["value"] for t, a in tags(resp.content) if t == "input" and "checked" in a]
    assert sorted(checked) == sorted([five[0].memory_id, five[1].memory_id])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"action": "forget"}, "Select at least one memory."),
        ({"action": "importance"}, "Give the new importance"),
        ({"action": "importance", "importance": "2"}, "less than or equal to 1"),
        ({"action": "explode"}, "Select a valid choice"),
        ({"action": "forget", "reason": "x" * 501}, "at most 500 characters"),
    ],
)
def test_bad_bulk_input_is_a_form_error(editor_client, five, data, message):
    data = {"memory_ids": [five[0].memory_id], **data}
    if data.get("memory_ids") and message.startswith("Select at least"):
        data.pop("memory_ids")
    resp = editor_client.post("/memories/bulk/", data, headers=HX)
    assert resp.status_code == 400 and message in text(resp)
    assert not Memory.objects.filter(version__gt=1).exists()


def test_a_selected_memory_that_was_purged_meanwhile_is_a_conflict(editor_client, admin_user, five):
    services.memory_purge(memory_id=five[0].memory_id, actor=admin_user)
    resp = editor_client.post(
        "/memories/bulk/",
        {"memory_ids": [five[1].memory_id, five[0].memory_id], "action": "forget"},
        headers=HX,
    )
    assert resp.status_code == 409 and "not found" in text(resp)
    assert not Memory.objects.get(pk=five[1].memory_id).is_forgotten


def test_a_viewer_cannot_bulk(viewer_client, five):
    resp = viewer_client.post(
        "/memories/bulk/", {"memory_ids": [five[0].memory_id], "action": "forget"}, headers=HX
    )
    assert resp.status_code == 403 and "needs the editor role" in text(resp)
    assert not Memory.objects.filter(deleted_at__isnull=False).exists()
    assert viewer_client.get("/memories/bulk/").status_code in (403, 405)


def test_bulk_refuses_get(editor_client):
    assert editor_client.get("/memories/bulk/").status_code == 405


def test_editor_list_query_count_is_pinned(editor_client, make_memory, django_assert_num_queries):
    for n in range(30):
        make_memory(f"fact {n}")
    # session, user, role groups; COUNT, one page: the checkboxes cost no query; the
    # namespace suggestions of the filter.
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(7):
        resp = editor_client.get("/memories/", {"q": "fact"})
    assert len(row_ids(resp.content)) == 25 and "bulk-form" in ids(resp.content)
