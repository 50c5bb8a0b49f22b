"""Facts over time in Chromium, DEBUG on (as ``scripts/run`` ships the console) and off, at
1400 and 390 px: two memories written through the New memory form, the second proposing
that it supersedes the first; the Conflicts page (side by side, word diff, evidence, the
count in the navigation, an edit error in place), Accept; the memory page's timeline; End
this fact, then Revalidate. No page wider than the window. Screenshots of the Conflicts page
and the memory page go to ``/tmp/conflict-shots/``."""

from pathlib import Path

import pytest

from memories import services
from memories.models import Conflict, Memory
from tests.browser import MARKS, MODES, login
from tests.test_browser_gone import _shows, _still_the_console
from tests.test_browser_phone import OVERFLOW

pytestmark = MARKS
SHOTS = Path("/tmp/conflict-shots")


def _shot(page, name: str, debug: bool, width: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    mode = "debug" if debug else "nodebug"
    page.screenshot(path=str(SHOTS / f"{name}-{mode}-{width}.png"), full_page=True)


def _write(page, base: str, content: str) -> Memory:
    page.goto(f"{base}/memories/new/")
    page.fill("#id_user_id", "household")
    page.fill("#id_content", content)
    page.click("#new-memory-form button[type=submit]")
    _shows(page, "Memory created.")
    return Memory.objects.get(content=content)


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_review_a_proposal_then_end_and_revalidate_the_fact(console, live_server, admin_user,
                                                           debug, width):
    base = live_server.url
    page = console(width, debug)
    porto = _write(page, base, "Alice lives in Porto.")
    assert page.locator("#nav-conflicts .nav-count").count() == 0
    madrid = _write(page, base, "Alice moved to Madrid.")
    conflict = Conflict.objects.get(newer=madrid, older=porto)
    # The count is in the navigation of every page, this one included.
    assert page.locator("#nav-conflicts .nav-count").inner_text() == "1"

    page.click("#nav-conflicts")
    page.wait_for_url(f"{base}/conflicts/")
    page.wait_for_function("() => window.htmx !== undefined")
    card = page.locator(f"#conflict-{conflict.pk}")
    assert card.locator("[data-side=older] .content-block").inner_text() == "Alice lives in Porto."
    assert card.locator("[data-side=newer] .content-block").inner_text() == "Alice moved to Madrid."
    assert card.locator(".diff del").count() >= 1 and card.locator(".diff ins").count() >= 1
    assert "alice|residence" in card.locator(".conflict-evidence").inner_text()
    # Older and newer side by side on a desktop, one under the other on a phone.
    older = card.locator("[data-side=older]").bounding_box()
    newer = card.locator("[data-side=newer]").bounding_box()
    assert (older["y"] == newer["y"]) if width > 700 else (newer["y"] > older["y"])
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "conflicts", debug, width)

    # Edit the newer text after someone else changed it: the conflict in place, the fold
    # open, the typed text kept.
    services.memory_update(memory_id=madrid.memory_id, actor=admin_user, reason="typo",
                           content="Alice moved to Madrid!")
    card.locator("details.conflict-edit summary").click()
    card.locator("textarea").fill("Alice moved to Madrid in May.")
    card.locator("details.conflict-edit input[name=reason]").fill("when")
    card.locator("details.conflict-edit button[type=submit]").click()
    _shows(page, "after you opened the form")
    card = page.locator(f"#conflict-{conflict.pk}")
    assert card.locator("textarea").input_value() == "Alice moved to Madrid in May."
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "conflicts-edit-error", debug, width)

    # Accept, with a reason: the proposal leaves the open list, the count goes.
    card.locator("input[name=reason]").first.fill("she moved in May")
    card.locator("button[value=accept]").click()
    _shows(page, "Accepted: ")
    assert page.locator(f"#conflict-{conflict.pk}").count() == 0
    assert page.locator("#no-conflicts").is_visible()
    assert page.locator("#nav-conflicts .nav-count").count() == 0  # followed, out of band
    porto.refresh_from_db()
    assert porto.superseded_by == madrid.memory_id
    page.goto(f"{base}/conflicts/?status=accepted")
    assert page.locator(f"#conflict-{conflict.pk}").is_visible()
    assert page.locator("#nav-conflicts .nav-count").count() == 0

    # The memory list's superseded state and the search page's as of / include superseded.
    page.goto(f"{base}/memories/?user_id=household&state=superseded")
    assert page.eval_on_selector_all("#memory-table tr[data-memory-id]",
                                     "r => r.map(e => e.dataset.memoryId)") == [porto.memory_id]
    _shows(page, "Superseded by")
    assert page.evaluate(OVERFLOW)
    _shot(page, "list-superseded", debug, width)
    page.goto(f"{base}/search/")
    page.fill("#id_user_id", "household")
    page.fill("#id_q", "Alice Porto")
    page.check("#id_include_superseded")
    page.click("#search-form button[type=submit]")
    _shows(page, "superseded by")
    assert page.locator(f"tr[data-memory-id='{porto.memory_id}'] .valid-note a").inner_text() \
        == madrid.memory_id
    assert page.evaluate(OVERFLOW)
    _shot(page, "search-superseded", debug, width)

    # The older memory's page: superseded, its timeline (Porto, then Madrid), the links.
    page.goto(f"{base}/memories/{porto.memory_id}/")
    assert page.locator("#state-badge").inner_text() == "superseded"
    assert page.eval_on_selector_all("#memory-timeline li", "l => l.map(e => e.dataset.memoryId)") \
        == [porto.memory_id, madrid.memory_id]
    assert page.locator("#superseded-by a").inner_text() == madrid.memory_id
    assert page.locator("#revalidate-form").is_visible()
    assert page.evaluate(OVERFLOW)
    _shot(page, "memory-superseded", debug, width)

    # The newer memory: End this fact (an end before it began: the error in place), then
    # Revalidate.
    page.click(f"#memory-timeline a[href='/memories/{madrid.memory_id}/']")
    page.wait_for_url(f"{base}/memories/{madrid.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.locator("#supersedes a").inner_text() == porto.memory_id
    page.click("#end-details summary")
    page.fill("#end_reason", "Alice left Spain")
    page.fill("#end_valid_until", "2020-01-01T00:00")  # before the fact began
    page.click("#end-form button[type=submit]")
    _shows(page, "The end must not be before the fact began")
    assert page.locator("#end-details").get_attribute("open") is not None
    assert page.input_value("#end_reason") == "Alice left Spain"
    _shot(page, "memory-end-error", debug, width)
    page.fill("#end_valid_until", "")
    page.click("#end-form button[type=submit]")
    _shows(page, "Fact ended")
    assert page.locator("#state-badge").inner_text() == "ended"
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "memory-ended", debug, width)
    page.fill("#revalidate_reason", "she came back")
    page.click("#revalidate-form button[type=submit]")
    _shows(page, "The fact holds again (version")
    assert page.locator("#state-badge").inner_text() == "live"
    assert "still holds" in page.locator("#valid-until").inner_text()
    madrid.refresh_from_db()
    assert madrid.valid_until is None
    assert page.evaluate(OVERFLOW)
    _shot(page, "memory", debug, width)
    assert page.errors == []


@pytest.mark.parametrize("width", [1400, 390])
def test_without_javascript_the_queue_still_works(chromium, live_server, admin_user, settings,
                                                  width):
    """Plain forms and redirects: a box ticked outside the bulk form (its form attribute)
    is posted with it, and Accept all shown accepts the page's proposals."""
    settings.DEBUG = True
    for who, old, new in (("Alice", "Porto", "Madrid"), ("Bob", "Lyon", "Paris"),
                          ("Carol", "Oslo", "Bergen")):
        services.memory_create(user_id="household", content=f"{who} lives in {old}.")
        services.memory_create(user_id="household", content=f"{who} moved to {new}.")
    bob = Conflict.objects.get(newer__content="Bob moved to Paris.")
    context = chromium.new_context(java_script_enabled=False,
                                   viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        login(page, live_server.url)
        page.goto(f"{live_server.url}/conflicts/")
        assert page.locator("#nav-conflicts .nav-count").inner_text() == "3"
        page.check(f"#conflict-{bob.pk} input[name=conflict_ids]")
        page.click("#accept-selected")
        page.wait_for_url(f"{live_server.url}/conflicts/**")
        assert page.get_by_text("Accepted 1 proposal.").is_visible()
        bob.refresh_from_db()
        assert bob.status == "accepted"
        assert page.locator("#nav-conflicts .nav-count").inner_text() == "2"
        page.click("#accept-shown")
        page.wait_for_url(f"{live_server.url}/conflicts/**")
        assert page.get_by_text("Accepted 2 proposals.").is_visible()
        assert not Conflict.objects.filter(status="open").exists()
        assert page.locator("#no-conflicts").is_visible()
    finally:
        context.close()
