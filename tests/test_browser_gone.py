"""In a real browser (headless Chromium), with DEBUG on as ``scripts/run`` ships the console
and off as in production: what an htmx action answers with a 4xx (a form error, a refusal, a
memory purged after the page was loaded) shows in place, and the page around it stays the
styled, usable console (django-htmx's debug error handler must not replace the document).
Screenshots go to ``var/screenshots/in-place-*`` and ``gone-*``."""

import pytest

from memories import services
from memories.models import Memory
from tests.browser import MARKS, MODES, SHOTS

pytestmark = MARKS


def _shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _still_the_console(page) -> None:
    """The document was not replaced: the stylesheet, the styled top bar, the navigation."""
    assert page.locator("link[rel=stylesheet][href*='console']").count() == 1
    assert page.eval_on_selector(".topbar", "el => getComputedStyle(el).display") == "flex"
    assert page.locator("nav.mainnav").is_visible()


def _shows(page, text: str) -> None:
    """``text`` appears, visible, in the page (waiting for the swap)."""
    page.get_by_text(text).first.wait_for(state="visible", timeout=10_000)


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_htmx_form_errors_and_refusals_show_in_place(console, live_server, admin_user, debug,
                                                    width):
    base = live_server.url
    memory, _ = services.memory_create(user_id="alice", content="plants need water weekly")
    services.memory_create(user_id="alice", content="the office ferns need water on Mondays")
    page = console(width, debug)
    mode = "debug" if debug else "nodebug"

    # Bulk Apply with nothing selected: the bulk form's error, in the list.
    page.goto(f"{base}/memories/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.click("#bulk-form button[type=submit]")
    _shows(page, "Select at least one memory.")
    _still_the_console(page)
    assert page.locator("#memory-table").is_visible()  # the list is still there to use
    _shot(page, f"in-place-bulk-{mode}-{width}")

    # Importance min above max: the filter's error, where the rows were.
    page.fill("#id_importance_min", "0.9")
    page.fill("#id_importance_max", "0.1")
    page.click("#memory-filters button[type=submit]")
    _shows(page, "Must be at least the minimum importance.")
    _still_the_console(page)
    _shot(page, f"in-place-filter-{mode}-{width}")

    # Malformed JSON metadata in the edit form: the field's error, in the open fold.
    page.goto(f"{base}/memories/{memory.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.click("#edit-details summary")
    page.fill("#edit_metadata", "{not json")
    page.fill("#edit_reason", "metadata")
    page.click("#edit-form button[type=submit]")
    _shows(page, "Not valid JSON")
    _still_the_console(page)
    _shot(page, f"in-place-edit-json-{mode}-{width}")

    # The Policy page's dry run for a namespace that holds nothing: the form error in #policy.
    page.goto(f"{base}/index/policy/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.fill("#id_user_id", "nobody-yet")
    page.click("#policy-form button[type=submit]")
    _shows(page, "No such namespace")
    _still_the_console(page)
    _shot(page, f"in-place-policy-{mode}-{width}")

    # An action the server refuses (the cleanup of no namespace): the refusal in the messages.
    page.evaluate("() => htmx.ajax('POST', '/index/policy/cleanup/', {target: '#policy'})")
    page.locator("#messages #forbidden").wait_for(state="visible", timeout=10_000)
    _still_the_console(page)

    # The compare page after its namespace emptied: B's slider answers the form error.
    page.goto(f"{base}/search/compare/?user_id=alice&q=water")
    page.wait_for_function("() => window.htmx !== undefined")
    for memory_id in list(Memory.objects.filter(user_id="alice").values_list("memory_id", flat=True)):
        services.memory_purge(memory_id=memory_id, reason="emptied meanwhile")
    page.select_option("#tune-stemming", "off")
    _shows(page, "No such namespace")
    _still_the_console(page)
    _shot(page, f"in-place-compare-{mode}-{width}")
    assert page.errors == []


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_a_blank_content_error_opens_the_folded_edit_form(console, live_server, debug, width):
    memory, _ = services.memory_create(user_id="alice", content="plants need water weekly")
    page = console(width, debug)
    page.goto(f"{live_server.url}/memories/{memory.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.click("#edit-details summary")
    # White space passes the browser's `required`; the service refuses it (content, 400).
    page.fill("#edit_content", "   \n  ")
    page.fill("#edit_reason", "blank it")
    page.click("#edit-form button[type=submit]")
    _shows(page, "content must not be blank")
    assert page.get_attribute("#edit-details", "open") is not None
    assert page.input_value("#edit_content") == "   \n  "  # what was typed, kept to fix
    _still_the_console(page)
    _shot(page, f"in-place-edit-blank-{'debug' if debug else 'nodebug'}-{width}")
    assert page.errors == []


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_forget_on_a_purged_memory_says_it_is_gone(console, live_server, debug, width):
    memory, _ = services.memory_create(user_id="alice", content="a note someone will purge")
    page = console(width, debug)
    page.goto(f"{live_server.url}/memories/{memory.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    services.memory_purge(memory_id=memory.memory_id, reason="meanwhile")
    page.on("dialog", lambda dialog: dialog.accept())  # hx-confirm of Forget
    page.click("#state-form button[type=submit]")
    gone = page.locator("#memory-panel.gone")
    gone.wait_for(timeout=10_000)
    assert "no longer exists" in gone.inner_text()
    assert gone.is_visible()
    _still_the_console(page)
    _shot(page, f"gone-{'debug' if debug else 'nodebug'}-{width}")
    assert page.errors == []
