"""The Conflicts page (the review queue of proposed supersessions): side by side with the
word diff and the evidence, accept / reject / edit the newer text, bulk accept, filters,
the open count in the navigation; roles, errors in place, with and without htmx."""

import pytest

from memories.models import Conflict, ConflictStatus, Memory
from tests.views.conftest import HX, attr_values, ids, text

pytestmark = pytest.mark.django_db


def conflict_ids(body) -> list[str]:
    return attr_values(body, "data-conflict-id")


@pytest.fixture
def porto(make_memory):
    """Alice's residence, twice: the second write proposes that it supersedes the first."""
    older = make_memory("Alice lives in Porto.", user_id="team-a", author="desk")
    newer = make_memory("Alice moved to Madrid.", user_id="team-a", author="agent")
    return Conflict.objects.get(newer=newer, older=older)


@pytest.fixture
def lisbon(make_memory):
    """A second proposal, in another namespace."""
    make_memory("Bob works at Acme.", user_id="team-b")
    newer = make_memory("Bob now works at Globex.", user_id="team-b")
    return Conflict.objects.get(newer=newer)


def test_it_shows_each_proposal_side_by_side(viewer_client, porto):
    resp = viewer_client.get("/conflicts/")
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body
    assert conflict_ids(body) == [str(porto.pk)]
    assert "Alice lives in Porto." in body and "Alice moved to Madrid." in body
    assert "<del>Porto" in body or "<del>lives in Porto" in body  # the word diff
    assert "<ins>" in body
    assert "alice|residence" in body and "madrid" in body  # the evidence: slot, value
    assert "0.90" in body and "author desk" in body and "author agent" in body
    assert f'href="/memories/{porto.older_id}/"' in body
    # Viewers see, never decide.
    assert "conflict-bulk-form" not in body and "Accept</button>" not in body


def test_the_open_count_is_in_the_navigation_of_every_page(viewer_client, porto, lisbon):
    for url in ("/", "/memories/", "/conflicts/", f"/memories/{porto.newer_id}/"):
        body = text(viewer_client.get(url))
        assert 'id="nav-conflicts"' in body
        assert 'class="nav-count" title="2 open proposals">2</span>' in body, url


def test_no_count_when_nothing_is_open(viewer_client):
    body = text(viewer_client.get("/"))
    assert 'id="nav-conflicts"' in body and "nav-count" not in body


def test_it_filters_by_namespace_and_status(viewer_client, editor, porto, lisbon):
    from memories import services

    assert conflict_ids(text(viewer_client.get("/conflicts/"))) == [str(lisbon.pk), str(porto.pk)]
    resp = viewer_client.get("/conflicts/", {"user_id": "team-b"})
    assert conflict_ids(text(resp)) == [str(lisbon.pk)]
    services.conflict_accept(conflict_id=porto.pk, actor=editor)
    assert conflict_ids(text(viewer_client.get("/conflicts/"))) == [str(lisbon.pk)]
    body = text(viewer_client.get("/conflicts/", {"status": "accepted"}))
    assert conflict_ids(body) == [str(porto.pk)] and "Decided" in body
    assert conflict_ids(text(viewer_client.get("/conflicts/", {"status": "rejected"}))) == []
    assert "No rejected proposals" in text(viewer_client.get("/conflicts/?status=rejected"))


def test_bad_filters_are_400_with_the_error(viewer_client):
    resp = viewer_client.get("/conflicts/", {"status": "maybe"})
    assert resp.status_code == 400 and "Select a valid choice" in text(resp)
    resp = viewer_client.get("/conflicts/", {"user_id": " padded"})
    assert resp.status_code == 400


def test_htmx_gets_the_rows_fragment(viewer_client, porto):
    resp = viewer_client.get("/conflicts/", headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert "conflict-rows" in ids(body) and conflict_ids(body) == [str(porto.pk)]


def test_methods_and_roles(viewer_client, norole_client, porto):
    assert viewer_client.post("/conflicts/").status_code == 405
    assert viewer_client.get(f"/conflicts/{porto.pk}/decide/").status_code == 405
    assert norole_client.get("/conflicts/").status_code == 403
    for url in (f"/conflicts/{porto.pk}/decide/", f"/conflicts/{porto.pk}/edit/",
                "/conflicts/bulk/"):
        resp = viewer_client.post(url, {"decision": "accept", "scope": "shown",
                                        "shown": str(porto.pk)})
        assert resp.status_code == 403, url
    porto.refresh_from_db()
    assert porto.status == ConflictStatus.OPEN


def test_accept_supersedes_the_older_and_redirects_back(editor_client, porto, lisbon):
    back = "user_id=team-a&status=open&page=1"
    resp = editor_client.post(f"/conflicts/{porto.pk}/decide/",
                              {"decision": "accept", "reason": "she moved", "back": back})
    assert resp.status_code == 302
    assert resp["Location"] == "/conflicts/?user_id=team-a&status=open&page=1"
    porto.refresh_from_db()
    older = Memory.objects.get(pk=porto.older_id)
    assert porto.status == ConflictStatus.ACCEPTED and porto.decision_reason == "she moved"
    assert older.superseded_by == porto.newer_id and older.valid_until is not None
    body = text(editor_client.get(resp["Location"]))
    assert "Accepted: " in body and conflict_ids(body) == []
    assert 'title="1 open proposal">1</span>' in body  # the count followed


def test_reject_keeps_both_and_rejecting_an_accepted_one_undoes_it(editor_client, porto):
    editor_client.post(f"/conflicts/{porto.pk}/decide/", {"decision": "accept"})
    body = text(editor_client.get("/conflicts/?status=accepted"))
    assert "Reject (undo)" in body
    resp = editor_client.post(f"/conflicts/{porto.pk}/decide/",
                              {"decision": "reject", "reason": "both true"}, headers=HX)
    assert resp.status_code == 200 and "<html" not in text(resp)
    assert "both hold" in text(resp)
    # The navigation's count follows, out of band (here: still none open).
    assert '<a href="/conflicts/" id="nav-conflicts" aria-current="page" hx-swap-oob="true">Conflicts</a>' in text(resp)
    porto.refresh_from_db()
    older = Memory.objects.get(pk=porto.older_id)
    assert porto.status == ConflictStatus.REJECTED
    assert older.valid_until is None and older.superseded_by is None


def test_a_refused_accept_shows_its_error_on_the_proposal(editor_client, porto):
    # The newer fact said to hold from before the older one: it cannot end it.
    newer = Memory.objects.get(pk=porto.newer_id)
    Memory.objects.filter(pk=porto.newer_id).update(valid_from=newer.created_at.replace(year=2000))
    resp = editor_client.post(f"/conflicts/{porto.pk}/decide/", {"decision": "accept"})
    body = text(resp)
    assert resp.status_code == 400 and "cannot end it" in body
    assert 'class="field-error"' in body and conflict_ids(body) == [str(porto.pk)]
    porto.refresh_from_db()
    assert porto.status == ConflictStatus.OPEN


def test_a_bad_decision_is_400_and_an_unknown_proposal_404(editor_client, porto):
    resp = editor_client.post(f"/conflicts/{porto.pk}/decide/", {"decision": "maybe"})
    assert resp.status_code == 400 and "Select a valid choice" in text(resp)
    assert editor_client.post("/conflicts/999999/decide/", {"decision": "accept"}).status_code == 404


def test_edit_the_newer_text(editor_client, porto):
    newer = Memory.objects.get(pk=porto.newer_id)
    resp = editor_client.post(f"/conflicts/{porto.pk}/edit/", {
        "content": "Alice moved to Madrid in May.", "reason": "date", "version": newer.version,
        "back": "status=open"})
    assert resp.status_code == 302 and resp["Location"] == "/conflicts/?status=open"
    newer.refresh_from_db()
    assert newer.content == "Alice moved to Madrid in May." and newer.version == 2
    assert "Alice moved to Madrid in May." in text(editor_client.get("/conflicts/"))


def test_edit_errors_show_in_place(editor_client, editor, porto):
    from memories import services

    newer = Memory.objects.get(pk=porto.newer_id)
    resp = editor_client.post(f"/conflicts/{porto.pk}/edit/", {
        "content": "Alice moved to Madrid.", "version": newer.version}, headers=HX)
    body = text(resp)
    assert resp.status_code == 400 and "A reason is required to edit a memory." in body
    assert "<details class=\"edit-details conflict-edit\" open>" in body
    # Changed meanwhile: a conflict, the typed text kept, the version moved on.
    services.memory_update(memory_id=newer.memory_id, actor=editor, reason="x",
                           content="Alice moved to Madrid, Spain.")
    resp = editor_client.post(f"/conflicts/{porto.pk}/edit/", {
        "content": "Alice moved to Madrid (2026).", "reason": "r", "version": newer.version})
    body = text(resp)
    assert resp.status_code == 409 and "Alice moved to Madrid (2026)." in body
    assert 'name="version" value="2"' in body


def test_bulk_accept_selected_and_all_shown(editor_client, porto, lisbon):
    resp = editor_client.post("/conflicts/bulk/", {"scope": "selected",
                                                   "conflict_ids": [str(lisbon.pk)],
                                                   "back": "status=open"})
    assert resp.status_code == 302
    lisbon.refresh_from_db()
    porto.refresh_from_db()
    assert lisbon.status == ConflictStatus.ACCEPTED and porto.status == ConflictStatus.OPEN
    body = text(editor_client.get("/conflicts/"))
    assert "Accepted 1 proposal." in body
    assert f'name="shown" value="{porto.pk}"' in body and "Accept all 1 shown" in body
    resp = editor_client.post("/conflicts/bulk/", {"scope": "shown", "shown": str(porto.pk)},
                              headers=HX)
    assert resp.status_code == 200 and "Accepted 1 proposal." in text(resp)
    porto.refresh_from_db()
    assert porto.status == ConflictStatus.ACCEPTED


def test_bulk_errors_show_in_place(editor_client, porto):
    resp = editor_client.post("/conflicts/bulk/", {"scope": "selected", "back": "status=open"})
    assert resp.status_code == 400 and "Select at least one proposal." in text(resp)
    resp = editor_client.post("/conflicts/bulk/", {"scope": "shown", "shown": "1,x"})
    assert resp.status_code == 400 and "not what the page sent" in text(resp)
    # An id that is no proposal (any more): named, the others still accepted.
    resp = editor_client.post("/conflicts/bulk/", {"scope": "shown",
                                                   "shown": f"{porto.pk},999999"})
    assert resp.status_code == 302
    body = text(editor_client.get("/conflicts/"))
    assert "Proposal 999999 was not accepted" in body and "Accepted 1 proposal." in body


def test_list_query_count_is_pinned(viewer_client, porto, lisbon, django_assert_num_queries):
    viewer_client.get("/conflicts/")
    # The session, its user, the user's role, the COUNT and one page (newer and older
    # joined), and the open count the fragment sends to the navigation out of band.
    with django_assert_num_queries(6):
        viewer_client.get("/conflicts/", headers=HX)
