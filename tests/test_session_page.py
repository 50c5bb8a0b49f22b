"""The session page's console part of memory formation: the "Suggested memories" panel
(a dry run shown only when asked, accept one, edit then accept with its errors in place,
accept all, roles; plain forms answered by a redirect back to the panel, htmx by the
panel itself), time travel (``?at=``) and the folded / hot markers."""

import datetime as dt

import pytest

from memories.models import Memory
from sessions import services as sessions
from sessions.extract import session_extract

# postgres: the panel reads memories by a JSON key of their metadata.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

BASE = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
TURNS = [
    ("user", "Hi there!"),
    ("assistant", "Hello! How can I help you plan your trip?"),
    ("user", "My name is Marta Silva and I live in Lisbon."),
    ("assistant", "Nice to meet you, Marta."),
    ("user", "I have a severe shellfish allergy, so please avoid seafood restaurants."),
    ("assistant", "Noted: no shellfish."),
]
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def trip(builtins):
    sessions.session_create(user_id="marta", session_id="trip-1")
    sessions.session_append(session_id="trip-1", messages=[
        {"role": role, "content": text, "at": BASE + dt.timedelta(minutes=n)}
        for n, (role, text) in enumerate(TURNS)])
    return "trip-1"


def _url(sid: str, tail: str = "") -> str:
    return f"/sessions/{sid}/{tail}"


def _candidates(sid: str) -> list[dict]:
    found = session_extract(session_id=sid, dry_run=True)["candidates"]
    assert found, "the local extractor suggests something for these turns"
    return found


def _post_fields(c: dict, index: int, **changes) -> dict:
    fields = {"content": c["content"], "type": c["type"],
              "seqs": ",".join(map(str, c["seqs"])), "confidence": c["confidence"],
              "method": "local", "index": index}
    fields.update(changes)
    return fields


def test_the_panel_is_computed_only_when_asked(trip, viewer_client, monkeypatch):
    calls = []
    import sessions.extract as extract

    real = extract.session_extract
    monkeypatch.setattr(extract, "session_extract",
                        lambda **kw: calls.append(kw) or real(**kw))
    page = viewer_client.get(_url(trip)).content.decode()
    assert 'id="suggested-memories"' in page and "Suggest memories" in page
    assert calls == []
    page = viewer_client.get(_url(trip) + "?suggest=1").content.decode()
    assert calls and calls[0]["dry_run"] is True
    c = _candidates(trip)[0]
    assert c["content"] in page
    assert f'href="#msg-{c["seqs"][0]}"' in page
    assert "by the local extractor" in page
    # A viewer sees the suggestions without the buttons.
    assert "Accept all" not in page and "Edit then accept" not in page
    assert Memory.objects.count() == 0  # a dry run writes nothing


def test_the_htmx_panel_and_the_plain_redirect(trip, viewer_client):
    plain = viewer_client.get(_url(trip, "suggested/"))
    assert plain.status_code == 302
    assert plain["Location"].endswith("?suggest=1#suggested-memories")
    fragment = viewer_client.get(_url(trip, "suggested/"), **HTMX)
    body = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith("{#") is False
    assert 'id="suggested-memories"' in body and _candidates(trip)[0]["content"] in body


def test_viewers_cannot_accept(trip, viewer_client):
    c = _candidates(trip)[0]
    assert viewer_client.post(_url(trip, "suggested/accept/"), _post_fields(c, 0)).status_code == 403
    assert viewer_client.post(_url(trip, "suggested/accept-all/")).status_code == 403
    assert Memory.objects.count() == 0


def test_accept_one_without_javascript_redirects_back_to_the_panel(trip, editor_client):
    c = _candidates(trip)[0]
    answer = editor_client.post(_url(trip, "suggested/accept/"), _post_fields(c, 0))
    assert answer.status_code == 302
    assert answer["Location"] == "/sessions/trip-1/?suggest=1#suggested-memories"
    memory = Memory.objects.get()
    assert memory.content == c["content"] and memory.conversation_id == trip
    assert memory.metadata["source"] == {"session_id": trip, "seqs": c["seqs"]}
    page = editor_client.get(answer["Location"]).content.decode()
    assert f"Memory written: {memory.memory_id}" in page
    assert f'/memories/{memory.memory_id}/' in page and "Accepted: <a" in page
    # Accepting it again answers the live one (dedup), writing nothing.
    again = editor_client.post(_url(trip, "suggested/accept/"), _post_fields(c, 0), follow=True)
    assert f"Already a memory: {memory.memory_id}" in again.content.decode()
    assert Memory.objects.count() == 1


def test_accept_one_with_htmx_swaps_the_panel(trip, editor_client):
    c = _candidates(trip)[0]
    answer = editor_client.post(_url(trip, "suggested/accept/"), _post_fields(c, 0), **HTMX)
    body = answer.content.decode()
    assert answer.status_code == 200 and "<html" not in body
    memory = Memory.objects.get()
    assert f"Memory written: {memory.memory_id}" in body
    assert 'id="session-memories" hx-swap-oob="true"' in body  # the side panel follows


def test_edit_then_accept_shows_errors_in_place_then_writes(trip, editor_client):
    c = _candidates(trip)[0]
    bad = _post_fields(c, 0, content="   ", importance="7", edited="True")
    answer = editor_client.post(_url(trip, "suggested/accept/"), bad)
    body = answer.content.decode()
    assert answer.status_code == 400 and "<html" in body  # the page again, errors in place
    assert "The memory needs some text." in body
    assert "Ensure this value is less than or equal to 1" in body
    assert 'id="candidate-0"' in body and "<details class=\"edit-details candidate-edit\" open" in body
    fragment = editor_client.post(_url(trip, "suggested/accept/"), bad, **HTMX)
    assert fragment.status_code == 400 and "<html" not in fragment.content.decode()
    assert "The memory needs some text." in fragment.content.decode()
    assert Memory.objects.count() == 0

    good = _post_fields(c, 0, content="Marta Silva lives in Lisbon.", type="long_term",
                        importance="0.9", edited="True")
    answer = editor_client.post(_url(trip, "suggested/accept/"), good)
    assert answer.status_code == 302
    memory = Memory.objects.get()
    assert memory.content == "Marta Silva lives in Lisbon." and memory.importance == 0.9
    assert memory.metadata["extraction"]["edited"] is True
    page = editor_client.get(answer["Location"]).content.decode()
    assert "Accepted, edited:" in page and memory.memory_id in page


def test_a_text_already_a_memory_of_the_conversation_says_so(trip, editor_client):
    from memories import services

    c = _candidates(trip)[0]
    existing, _ = services.memory_create(user_id="marta", conversation_id=trip,
                                         content=c["content"], type=c["type"])
    page = editor_client.get(_url(trip) + "?suggest=1").content.decode()
    assert f'Already a memory: <a class="mono" href="/memories/{existing.memory_id}/"' in page
    answer = editor_client.post(_url(trip, "suggested/accept/"), _post_fields(c, 0), follow=True)
    assert f"Already a memory: {existing.memory_id}" in answer.content.decode()
    assert Memory.objects.count() == 1


def test_an_unknown_source_turn_is_an_error_in_place(trip, editor_client):
    c = _candidates(trip)[0]
    answer = editor_client.post(_url(trip, "suggested/accept/"),
                                _post_fields(c, 0, seqs="99"), **HTMX)
    assert answer.status_code == 400 and "unknown messages [99]" in answer.content.decode()
    # A form for a candidate no longer listed says its error at the top of the panel.
    gone = editor_client.post(_url(trip, "suggested/accept/"),
                              _post_fields(c, 40, seqs="99"), **HTMX)
    assert gone.status_code == 400
    assert 'id="suggest-error"' in gone.content.decode()
    assert "unknown messages [99]" in gone.content.decode()
    assert Memory.objects.count() == 0


def test_accept_all(trip, editor_client):
    found = _candidates(trip)
    answer = editor_client.post(_url(trip, "suggested/accept-all/"), **HTMX)
    body = answer.content.decode()
    assert answer.status_code == 200 and f"Accepted all: {len(found)} memor" in body
    assert Memory.objects.filter(conversation_id=trip).count() == len(found)
    assert body.count("Accepted: <a") == len(found) and "Accept all" not in body
    plain = editor_client.post(_url(trip, "suggested/accept-all/"))
    assert plain.status_code == 302 and plain["Location"].endswith("#suggested-memories")
    assert Memory.objects.filter(conversation_id=trip).count() == len(found)  # nothing new
    page = editor_client.get(plain["Location"]).content.decode()
    assert "Nothing left to accept." in page


def test_accept_all_leaves_an_edited_candidate_as_accepted(trip, editor_client):
    found = _candidates(trip)
    editor_client.post(_url(trip, "suggested/accept/"), _post_fields(
        found[0], 0, content="Marta Silva lives in Lisbon.", edited="True"))
    editor_client.post(_url(trip, "suggested/accept-all/"))
    contents = set(Memory.objects.filter(conversation_id=trip).values_list("content", flat=True))
    assert "Marta Silva lives in Lisbon." in contents and found[0]["content"] not in contents
    assert contents == {"Marta Silva lives in Lisbon."} | {c["content"] for c in found[1:]}


def test_time_travel_shows_the_context_as_it_was(trip, viewer_client):
    page = viewer_client.get(_url(trip) + "?at=2026-05-01T12:02:30").content.decode()
    assert 'id="travel-banner"' in page and "Viewing as of 2026-05-01 12:02:30" in page
    assert TURNS[2][1] in page and TURNS[4][1] not in page
    assert "Back to now" in page and "the last 3 of the 3 messages" in page
    now = viewer_client.get(_url(trip)).content.decode()
    assert 'id="travel-banner"' not in now and TURNS[4][1] in now


def test_time_travel_with_a_bad_date_says_so_in_place(trip, viewer_client):
    answer = viewer_client.get(_url(trip) + "?at=yesterday-ish")
    body = answer.content.decode()
    assert answer.status_code == 400
    assert 'id="travel-error"' in body and "Enter a date and time" in body
    assert 'id="travel-now"' in body
    assert 'id="travel-banner"' not in body and TURNS[4][1] in body  # the page as now


def test_folded_and_hot_messages_are_marked(trip, viewer_client):
    page = viewer_client.get(_url(trip)).content.decode()
    assert "Nothing folded into the summary yet" in page and 'data-fold="folded"' not in page
    sessions.session_fold(session_id=trip, keep=2)
    page = viewer_client.get(_url(trip)).content.decode()
    assert 'id="fold-legend"' in page and "messages up to #4" in page
    for seq in range(1, 5):
        assert f'id="msg-{seq}" data-fold="folded"' in page
    for seq in (5, 6):
        assert f'id="msg-{seq}" data-fold="hot"' in page


def test_the_panel_lists_a_bounded_number_of_suggestions(trip, editor_client, monkeypatch):
    import sessions.views as views

    found = _candidates(trip)
    assert len(found) >= 2
    monkeypatch.setattr(views, "SUGGEST_SHOWN", len(found) - 1)
    page = editor_client.get(_url(trip) + "?suggest=1").content.decode()
    assert page.count('<li class="candidate"') == len(found) - 1
    assert f"Showing the first {len(found) - 1} of {len(found)} suggestions" in page
    editor_client.post(_url(trip, "suggested/accept-all/"))  # every one, the unlisted too
    assert Memory.objects.filter(conversation_id=trip).count() == len(found)
