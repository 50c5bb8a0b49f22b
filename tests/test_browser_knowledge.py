"""A knowledge manager's pages in Chromium, DEBUG on and off, at 1400 and 390 px: the memory
list's filters (every word of the text, author, tags, dates, state) kept in the URL, with the
forgotten memories' when, who and why; the New memory form (an error on its field, then the
new memory's page); a long memory's history folded to what changed, its full text on demand.
Each page no wider than the window. Screenshots go to ``var/screenshots/knowledge-*``."""

import datetime as dt

import pytest

from memories import services
from memories.models import Memory
from tests.browser import MARKS, MODES, SHOTS
from tests.test_browser_gone import _shows, _still_the_console
from tests.test_browser_phone import OVERFLOW

pytestmark = MARKS


def _shot(page, name: str, debug: bool, width: int) -> None:
    mode = "debug" if debug else "nodebug"
    page.screenshot(path=str(SHOTS / f"knowledge-{name}-{mode}-{width}.png"), full_page=True)


def _rows(page) -> list[str]:
    return page.eval_on_selector_all("#memory-table tr[data-memory-id]",
                                     "rows => rows.map(r => r.dataset.memoryId)")


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_the_list_filters_by_every_word_author_tags_and_dates(console, live_server, admin_user,
                                                              debug, width):
    def make(content, **fields):
        return services.memory_create(user_id="oakridge", content=content, **fields)[0]

    day = dt.datetime(2026, 3, 10, 9, tzinfo=dt.UTC)
    phone = make("Call the Oakridge office: phone 555-0100", author="desk", tags=["office"],
                 created_at=day)
    make("The Oakridge office moved to Elm Street", author="desk", tags=["office"],
         created_at=day)
    make("Oakridge phone list, old", author="intern", tags=["office"], created_at=day)
    gone = make("Oakridge phone 555-0199 (wrong)", author="desk", tags=["office"],
                created_at=day - dt.timedelta(days=30))
    services.memory_forget(memory_id=gone.memory_id, actor=admin_user, reason="wrong number")
    page = console(width, debug)
    page.goto(f"{live_server.url}/memories/")
    page.fill("#id_q", "phone Oakridge")
    page.fill("#id_user_id", "oakridge")
    page.fill("#id_author", "desk")
    page.fill("#id_tags", "office")
    page.fill("#id_created_from", "2026-03-01")
    page.fill("#id_created_to", "2026-03-31")
    page.click("#memory-filters button[type=submit]")
    page.wait_for_url("**created_to=2026-03-31**")
    assert _rows(page) == [phone.memory_id]
    assert "author=desk" in page.url and "tags=office" in page.url  # a shareable address
    link = page.locator("#rank-in-search")
    assert link.get_attribute("href") == "/search/?user_id=oakridge&q=phone+Oakridge"
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "list-filters", debug, width)

    # The forgotten state: when, by whom and why, newest forgotten first.
    page.goto(f"{live_server.url}/memories/?state=forgotten&user_id=oakridge")
    assert _rows(page) == [gone.memory_id]
    _shows(page, "by ada: “wrong number”")
    assert page.evaluate(OVERFLOW)
    _shot(page, "forgotten", debug, width)
    assert page.errors == []


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_a_new_memory_from_the_form(console, live_server, debug, width):
    services.memory_create(user_id="oakridge", content="an existing namespace")
    page = console(width, debug)
    page.goto(f"{live_server.url}/memories/")
    page.click("#new-memory")
    page.wait_for_url("**/memories/new/")
    assert page.eval_on_selector_all("#namespaces option", "o => o.map(e => e.value)") == [
        "oakridge"]
    page.fill("#id_user_id", "oakridge")
    page.fill("#id_content", "The Oakridge front desk opens at 8:30")
    page.fill("#id_tags", "office, hours")
    page.fill("#id_metadata", "[1, 2]")
    page.click("#new-memory-form button[type=submit]")
    _shows(page, "Metadata must be a JSON object")
    assert page.input_value("#id_content") == "The Oakridge front desk opens at 8:30"
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "new-error", debug, width)
    page.fill("#id_metadata", '{"source": "front desk"}')
    page.click("#new-memory-form button[type=submit]")
    _shows(page, "Memory created.")
    memory = Memory.objects.get(content="The Oakridge front desk opens at 8:30")
    assert page.url == f"{live_server.url}/memories/{memory.memory_id}/"
    assert memory.tags == ["office", "hours"] and memory.metadata == {"source": "front desk"}
    _shot(page, "new-created", debug, width)
    assert page.errors == []


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_a_long_memory_history_shows_what_changed(console, live_server, admin_user, debug,
                                                  width):
    text = " ".join(f"w{n} word{n}." for n in range(800))  # about 10,000 characters
    memory, _ = services.memory_create(user_id="oakridge", content=text)
    for old, new in (("word400.", "CHANGED400."), ("word10.", "EARLY10."), ("word799.", "END.")):
        text = text.replace(old, new)
        services.memory_update(memory_id=memory.memory_id, actor=admin_user, content=text)
    page = console(width, debug)
    page.goto(f"{live_server.url}/memories/{memory.memory_id}/")
    assert page.title().startswith("w0 word0. w1 word1.") and page.title().count("…") == 1
    history = page.locator("#memory-history")
    height = history.bounding_box()["height"]
    assert height < 2500, height  # was every version in full: 13,677 px for the page
    assert page.evaluate(OVERFLOW)
    _shot(page, "history", debug, width)
    mode = "debug" if debug else "nodebug"
    history.screenshot(path=str(SHOTS / f"knowledge-history-table-{mode}-{width}.png"))
    first = page.locator("#version-1 details.version-text")
    first.locator("summary").click()
    assert first.locator(".content-block").inner_text().startswith("w0 word0.")
    assert page.errors == []
