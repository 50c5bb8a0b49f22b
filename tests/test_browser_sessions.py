"""The session page in Chromium, DEBUG on (as ``scripts/run`` ships the console) and off, at
1400 and 390 px: a trip-planning conversation (a name, a city, an allergy) partly folded;
the folded / hot markers; Suggest memories (htmx), Edit then accept (an error in place, then
the edited text written), Accept all; time travel (the context as of a moment, a bad date
in place, back to now). No page wider than the window. Screenshots go to
``/tmp/session-shots/``."""

import datetime as dt
from pathlib import Path

import pytest

from memories.models import Memory
from sessions import services as sessions
from tests.browser import MARKS, MODES, login
from tests.test_browser_gone import _shows, _still_the_console
from tests.test_browser_phone import OVERFLOW

pytestmark = MARKS
SHOTS = Path("/tmp/session-shots")
BASE = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
TURNS = [
    ("user", "Hi there!"),
    ("assistant", "Hello! How can I help you plan your trip?"),
    ("user", "My name is Marta Silva and I live in Lisbon."),
    ("assistant", "Nice to meet you, Marta. Where would you like to go?"),
    ("user", "Porto in June, for a week. My budget is 6000 euros."),
    ("assistant", "Porto in June sounds lovely. Any dietary needs?"),
    ("user", "I have a severe shellfish allergy, so please avoid seafood restaurants."),
    ("assistant", "Noted: no shellfish, I will pick restaurants accordingly."),
]


def _shot(page, name: str, debug: bool, width: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    mode = "debug" if debug else "nodebug"
    page.screenshot(path=str(SHOTS / f"{name}-{mode}-{width}.png"), full_page=True)


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_suggest_edit_accept_all_and_time_travel(console, live_server, admin_user, debug, width):
    base = live_server.url
    sessions.session_create(user_id="marta", session_id="trip-1")
    sessions.session_append(session_id="trip-1", messages=[
        {"role": role, "content": text, "at": BASE + dt.timedelta(minutes=n)}
        for n, (role, text) in enumerate(TURNS)])
    sessions.session_fold(session_id="trip-1", keep=4)

    page = console(width, debug)
    page.goto(f"{base}/sessions/trip-1/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.locator("#fold-legend").is_visible()
    folds = page.eval_on_selector_all("#transcript li", "l => l.map(e => e.dataset.fold)")
    assert folds == ["folded"] * 4 + ["hot"] * 4
    assert page.locator("#candidate-0").count() == 0  # nothing computed until asked
    assert page.evaluate(OVERFLOW)
    _shot(page, "session", debug, width)

    page.click("#suggest-button")
    page.locator("#suggest-method").wait_for(state="visible")
    assert page.url == f"{base}/sessions/trip-1/"  # swapped in place
    candidates = page.locator("#suggested-memories li.candidate")
    assert candidates.count() >= 2
    texts = candidates.locator(".candidate-text").all_inner_texts()
    assert any("Marta" in t for t in texts) and any("shellfish" in t for t in texts)
    first = page.locator("#candidate-0")
    seq = first.locator(".candidate-seqs a").first.get_attribute("href")
    assert page.locator(seq).count() == 1  # a source turn links a message on the page
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "suggested", debug, width)

    # Edit then accept: whitespace only is refused in place, the form kept open; then the
    # edited text is written.
    first.locator("details.candidate-edit summary").click()
    first.locator("textarea").fill("   ")
    first.locator("details.candidate-edit button[type=submit]").click()
    _shows(page, "The memory needs some text.")
    first = page.locator("#candidate-0")
    assert first.locator("details.candidate-edit").get_attribute("open") is not None
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "edit-error", debug, width)
    first.locator("textarea").fill("Traveller (1 May 2026): Marta Silva, lives in Lisbon.")
    first.locator("select").select_option("long_term")
    first.locator("input[name=importance]").fill("0.8")
    first.locator("details.candidate-edit button[type=submit]").click()
    _shows(page, "Memory written: ")
    edited = Memory.objects.get(content="Traveller (1 May 2026): Marta Silva, lives in Lisbon.")
    assert edited.importance == 0.8
    assert page.locator("#candidate-0 .candidate-status a").inner_text() == edited.memory_id
    assert page.locator(f"#session-memories [data-memory-id='{edited.memory_id}']").count() == 1

    page.click("#accept-all-form button")
    _shows(page, "Accepted all: ")
    assert page.locator("#accept-all-form").count() == 0
    n = page.locator("#suggested-memories li.candidate").count()
    assert page.locator("#suggested-memories .candidate-status").count() == n
    assert Memory.objects.filter(conversation_id="trip-1").count() == n
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "accepted", debug, width)

    # Time travel: the context as of 12:04:30 (turns 1 to 5), then a bad date, then now.
    page.fill("#id_at", "2026-05-01T12:04:30")
    page.click("#travel-form button[type=submit]")
    page.locator("#travel-banner").wait_for(state="visible")
    assert "Viewing as of 2026-05-01 12:04:30" in page.locator("#travel-banner").inner_text()
    seqs = page.eval_on_selector_all("#transcript li", "l => l.map(e => e.id)")
    assert seqs == [f"msg-{n}" for n in range(1, 6)]
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "time-travel", debug, width)
    page.goto(f"{base}/sessions/trip-1/?at=not-a-date")
    assert "Enter a date and time" in page.locator("#travel-error").inner_text()
    assert page.evaluate(OVERFLOW)
    _shot(page, "time-travel-error", debug, width)
    page.click("#travel-now")
    page.wait_for_url(f"{base}/sessions/trip-1/")
    assert page.locator("#travel-banner").count() == 0
    assert page.locator("#transcript li").count() == len(TURNS)
    assert page.errors == []


@pytest.mark.parametrize("debug", MODES)
def test_the_panel_works_without_javascript(console, live_server, admin_user, debug):
    """JavaScript off: Suggest memories, Accept and Accept all are plain forms, each answered
    by a redirect back to the panel."""
    base = live_server.url
    sessions.session_create(user_id="marta", session_id="trip-2")
    sessions.session_append(session_id="trip-2", messages=[
        {"role": role, "content": text, "at": BASE + dt.timedelta(minutes=n)}
        for n, (role, text) in enumerate(TURNS)])
    browser = console(390, debug).context.browser
    page = browser.new_context(java_script_enabled=False,
                               viewport={"width": 390, "height": 900}).new_page()
    login(page, base)
    page.goto(f"{base}/sessions/trip-2/")
    page.click("#suggest-button")
    page.wait_for_url(f"{base}/sessions/trip-2/?suggest=1#suggested-memories")
    page.locator("#candidate-0 .accept-form button").click()
    page.wait_for_url(f"{base}/sessions/trip-2/?suggest=1#suggested-memories")
    assert "Memory written: " in page.locator(".messages").inner_text()
    assert page.locator("#candidate-0 .candidate-status").inner_text().startswith("Accepted:")
    page.click("#accept-all-form button")
    page.wait_for_url(f"{base}/sessions/trip-2/?suggest=1#suggested-memories")
    assert "Accepted all: " in page.locator(".messages").inner_text()
    n = page.locator("#suggested-memories li.candidate").count()
    assert Memory.objects.filter(conversation_id="trip-2").count() == n
    assert page.evaluate(OVERFLOW)
    _shot(page, "nojs-accepted", debug, 390)
