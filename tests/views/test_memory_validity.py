"""A memory's page shows its validity and timeline (what it superseded, what superseded
it), and ends the fact ("End this fact") or makes it hold again ("Revalidate"); inline
errors, roles, with and without htmx."""

import datetime as dt

import pytest

from memories import services
from memories.models import Conflict, Memory
from tests.views.conftest import HX, ids, text

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def chain(editor, make_memory):
    """Porto, then Madrid (accepted over Porto), then Lisbon (accepted over Madrid)."""
    porto = make_memory("Alice lives in Porto.", user_id="team-a")
    madrid = make_memory("Alice moved to Madrid.", user_id="team-a")
    services.conflict_accept(conflict_id=Conflict.objects.get(newer=madrid).pk, actor=editor)
    lisbon = make_memory("Alice moved to Lisbon.", user_id="team-a")
    services.conflict_accept(conflict_id=Conflict.objects.get(newer=lisbon).pk, actor=editor)
    return [Memory.objects.get(pk=m.pk) for m in (porto, madrid, lisbon)]


def timeline_ids(body) -> list[str]:
    import re

    section = body.split('id="memory-timeline"', 1)[1].split("</ol>", 1)[0]
    return re.findall(r'data-memory-id="([^"]+)"', section)


def test_the_page_shows_validity_and_the_timeline(viewer_client, chain):
    porto, madrid, lisbon = chain
    body = text(viewer_client.get(f"/memories/{madrid.memory_id}/"))
    assert timeline_ids(body) == [porto.memory_id, madrid.memory_id, lisbon.memory_id]
    assert 'id="state-badge">superseded<' in body
    superseded_by = body.split('id="superseded-by"', 1)[1].split("</dd>", 1)[0]
    assert f'href="/memories/{lisbon.memory_id}/"' in superseded_by
    supersedes = body.split('id="supersedes"', 1)[1].split("</dd>", 1)[0]
    assert f'href="/memories/{porto.memory_id}/"' in supersedes
    # Viewers read: no End / Revalidate.
    assert "end-form" not in ids(body) and "revalidate-form" not in ids(body)
    body = text(viewer_client.get(f"/memories/{lisbon.memory_id}/"))
    assert "still holds" in body and 'id="state-badge">live<' in body


def test_a_memory_alone_has_no_timeline(viewer_client, make_memory):
    m = make_memory("the office plant is a fern")
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    assert "memory-validity" in ids(body) and "memory-timeline" not in ids(body)
    assert "still holds" in body


def test_end_this_fact_then_revalidate(editor_client, make_memory):
    m = make_memory("Alice lives in Porto.", valid_from=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    body = text(editor_client.get(f"/memories/{m.memory_id}/"))
    assert "end-form" in ids(body) and "revalidate-form" not in ids(body)
    resp = editor_client.post(f"/memories/{m.memory_id}/end/",
                              {"reason": "no longer lives there", "valid_until": "2026-06-30T12:00"})
    assert resp.status_code == 302 and resp["Location"] == f"/memories/{m.memory_id}/"
    m.refresh_from_db()
    assert m.valid_until is not None and m.superseded_by is None
    assert m.history.latest("history_id").kind == "invalidate"
    body = text(editor_client.get(resp["Location"]))
    assert "Fact ended" in body and 'id="state-badge">ended<' in body
    assert "revalidate-form" in ids(body) and "end-form" not in ids(body)
    resp = editor_client.post(f"/memories/{m.memory_id}/revalidate/", {"reason": "back"},
                              headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body and "holds again" in body
    m.refresh_from_db()
    assert m.valid_until is None
    assert m.history.latest("history_id").kind == "revalidate"


def test_revalidating_a_superseded_fact_rejects_its_proposal(editor_client, chain):
    porto, madrid, _ = chain
    resp = editor_client.post(f"/memories/{porto.memory_id}/revalidate/", {"reason": "both"})
    assert resp.status_code == 302
    porto.refresh_from_db()
    assert porto.superseded_by is None and porto.valid_until is None
    assert Conflict.objects.get(older=porto, newer=madrid).status == "rejected"


def test_end_errors_show_in_place(editor_client, make_memory):
    m = make_memory("Alice lives in Porto.", valid_from=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    resp = editor_client.post(f"/memories/{m.memory_id}/end/", {"reason": ""}, headers=HX)
    body = text(resp)
    assert resp.status_code == 400 and "A reason is required to end a fact." in body
    assert '<details id="end-details" class="edit-details" open>' in body
    resp = editor_client.post(f"/memories/{m.memory_id}/end/",
                              {"reason": "r", "valid_until": "not a date"})
    assert resp.status_code == 400 and "Enter a valid date/time." in text(resp)
    # Before the fact began: the service's error, on the form.
    resp = editor_client.post(f"/memories/{m.memory_id}/end/",
                              {"reason": "r", "valid_until": "2025-01-01T00:00"})
    body = text(resp)
    assert resp.status_code == 400 and "must not be before valid_from" in body
    assert 'class="field-error"' in body
    m.refresh_from_db()
    assert m.valid_until is None


def test_ending_twice_is_a_conflict_shown_on_the_form(editor_client, editor, make_memory):
    m = make_memory("Alice lives in Porto.")
    services.memory_invalidate(memory_id=m.memory_id, actor=editor, reason="gone")
    resp = editor_client.post(f"/memories/{m.memory_id}/end/", {"reason": "again"})
    assert resp.status_code == 409 and "revalidate it first" in text(resp)


def test_revalidate_needs_a_reason_and_a_live_fact_is_left_alone(editor_client, make_memory):
    m = make_memory("Alice lives in Porto.")
    resp = editor_client.post(f"/memories/{m.memory_id}/revalidate/", {"reason": " "})
    assert resp.status_code == 400 and "A reason is required to revalidate a fact." in text(resp)
    resp = editor_client.post(f"/memories/{m.memory_id}/revalidate/", {"reason": "x"})
    assert resp.status_code == 302
    assert "already holds" in text(editor_client.get(resp["Location"]))


def test_roles_methods_and_unknown_memories(viewer_client, editor_client, make_memory):
    m = make_memory("Alice lives in Porto.")
    for action in ("end", "revalidate"):
        url = f"/memories/{m.memory_id}/{action}/"
        assert viewer_client.post(url, {"reason": "r"}).status_code == 403
        assert editor_client.get(url).status_code == 405
        assert editor_client.post(f"/memories/mem_unknown/{action}/",
                                  {"reason": "r"}).status_code == 404
    m.refresh_from_db()
    assert m.valid_until is None
