"""In a real browser (headless Chromium, DEBUG off as in production): an action on a memory
that someone purged after the page was loaded shows, in place, that the memory is gone."""

import shutil
from pathlib import Path

import pytest

from memories import services

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed"),
]


@pytest.mark.parametrize("width", [1400, 390])
def test_forget_on_a_purged_memory_says_it_is_gone(live_server, admin_user, monkeypatch, width):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    memory, _ = services.memory_create(user_id="alice", content="a note someone will purge")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "ada")
        page.fill("#id_password", "pw-ada")
        page.click("button[type=submit]")
        page.goto(f"{live_server.url}/memories/{memory.memory_id}/")
        page.wait_for_function("() => window.htmx !== undefined")
        services.memory_purge(memory_id=memory.memory_id, reason="meanwhile")
        page.on("dialog", lambda dialog: dialog.accept())  # hx-confirm of Forget
        page.click("#state-form button[type=submit]")
        gone = page.locator("#memory-panel.gone")
        gone.wait_for(timeout=10_000)
        assert "no longer exists" in gone.inner_text()
        assert gone.is_visible()
        page.screenshot(path=str(SHOTS / f"gone-{width}.png"), full_page=True)
        browser.close()
    assert not errors
