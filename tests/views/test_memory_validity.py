"""A memory's page shows its validity and timeline (what it superseded, what superseded
it), and ends the fact ("End this fact") or makes it hold again ("Revalidate"); inline
errors, roles, with and without htmx."""

import datetime as dt

import pytest

from memories import services
from memories.models import Conflict, Memory
from tests.views.conftest import HX, ids, text

pytestmark = pytest.mark.django_db


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
    assert resp.status_code == 400 and "The end must not be before the fact began (2026-01-01" in body
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


# --- the memory list's state filter -------------------------------------------------------


def row_ids(body) -> list[str]:
    from tests.views.conftest import tags

    return [a["data-memory-id"] for t, a in tags(body) if t == "tr" and "data-memory-id" in a]


@pytest.fixture
def states(editor, make_memory):
    """One memory in each state: live, superseded, ended by hand, forgotten, and one whose
    end is still ahead (live until then)."""
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    made = {name: make_memory(f"the {name} fact", user_id="team-s", valid_from=base,
                              created_at=base + dt.timedelta(days=n))
            for n, name in enumerate(["superseded", "ended", "forgotten", "ahead", "live",
                                      "newer"])}
    newer = made["newer"]
    from django.db import transaction

    from memories.services.validity import supersede
    with transaction.atomic():
        supersede(newer=Memory.objects.get(pk=newer.pk), older_ids=[made["superseded"].pk],
                  actor=editor, reason="replaced")
    services.memory_invalidate(memory_id=made["ended"].pk, actor=editor, reason="gone",
                               valid_until=base + dt.timedelta(days=30))
    services.memory_invalidate(memory_id=made["ahead"].pk, actor=editor, reason="later",
                               valid_until=dt.datetime(2099, 1, 1, tzinfo=dt.UTC))
    services.memory_forget(memory_id=made["forgotten"].pk, actor=editor, reason="x")
    return {k: m.pk for k, m in made.items()}


@pytest.mark.parametrize("state, want", [
    ("live", {"live", "ahead", "newer"}),
    ("superseded", {"superseded", "ended"}),
    ("forgotten", {"forgotten"}),
    ("all", {"live", "ahead", "newer", "superseded", "ended", "forgotten"}),
    ("", {"live", "ahead", "newer", "superseded", "ended", "forgotten"}),
])
def test_the_list_state_filter(viewer_client, states, state, want):
    resp = viewer_client.get("/memories/", {"user_id": "team-s", "state": state})
    assert resp.status_code == 200
    assert set(row_ids(resp.content)) == {states[name] for name in want}


def test_superseded_rows_say_by_what_and_until_when_most_recently_ended_first(viewer_client,
                                                                                states):
    body = text(viewer_client.get("/memories/", {"user_id": "team-s", "state": "superseded"}))
    # Ended by hand on day 30; superseded when "newer" began (day 0): most recent end first.
    assert row_ids(body) == [states["ended"], states["superseded"]]
    assert f'Superseded by <a class="mono" href="/memories/{states["newer"]}/">' in body
    assert "Ended · valid until" in body
    assert "Select a valid choice" in text(viewer_client.get("/memories/", {"state": "gone"}))


# --- the search page: as of, include superseded ---------------------------------------------


@pytest.fixture
def moved(editor, make_memory):
    """Porto from June, Madrid from September (accepted over Porto)."""
    porto = make_memory("Alice lives in Porto.", user_id="team-m",
                        valid_from=dt.datetime(2026, 6, 1, tzinfo=dt.UTC))
    madrid = make_memory("Alice moved to Madrid; Alice lives in Madrid now.", user_id="team-m",
                         valid_from=dt.datetime(2026, 9, 1, tzinfo=dt.UTC))
    services.conflict_accept(conflict_id=Conflict.objects.get(newer=madrid).pk, actor=editor)
    return porto, madrid


def hit_ids(body) -> list[str]:
    return row_ids(body)


def test_search_answers_the_facts_that_hold_now(viewer_client, moved):
    porto, madrid = moved
    resp = viewer_client.get("/search/", {"user_id": "team-m", "q": "Alice lives"})
    assert resp.status_code == 200 and hit_ids(resp.content) == [madrid.memory_id]


def test_search_as_of_answers_what_held_then_and_says_what_superseded_it(viewer_client, moved):
    porto, madrid = moved
    resp = viewer_client.get("/search/", {"user_id": "team-m", "q": "Alice lives",
                                          "as_of": "2026-07-15T12:00"}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and hit_ids(body) == [porto.memory_id]
    assert 'id="as-of"' in body
    assert (f'superseded by <a class="mono" href="/memories/{madrid.memory_id}/">'
            f'{madrid.memory_id}</a> since <time datetime="2026-09-01') in body


def test_search_include_superseded_answers_every_match(viewer_client, editor, moved):
    porto, madrid = moved
    resp = viewer_client.get("/search/", {"user_id": "team-m", "q": "Alice lives",
                                          "include_superseded": "on"})
    body = text(resp)
    assert set(hit_ids(body)) == {porto.memory_id, madrid.memory_id}
    assert 'id="with-superseded"' in body and "superseded by" in body
    assert 'name="include_superseded" id="id_include_superseded" checked' in body
    services.memory_invalidate(memory_id=madrid.memory_id, actor=editor, reason="left Spain")
    body = text(viewer_client.get("/search/", {"user_id": "team-m", "q": "Madrid",
                                               "include_superseded": "on"}))
    assert hit_ids(body) == [madrid.memory_id] and "ended <time" in body


def test_a_bad_as_of_is_a_400_on_its_field(viewer_client, moved):
    resp = viewer_client.get("/search/", {"user_id": "team-m", "q": "Alice", "as_of": "June"})
    assert resp.status_code == 400 and "Enter a valid date/time." in text(resp)
