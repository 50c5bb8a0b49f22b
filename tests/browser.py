"""What the browser tests share: the Chromium they drive, where screenshots go, their
markers, the login, and the ``console`` fixture (registered by tests/conftest.py): a page
logged in as the admin with ``DEBUG`` as the test asks."""

import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"  # Debian's (Playwright's own download fails)
SHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"
MODES = [pytest.param(True, id="debug-on"), pytest.param(False, id="debug-off")]

# pytestmark of a browser test module whose tests each run in a committed transaction.
MARKS = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed"),
]


def login(page, base: str, username: str = "ada", password: str | None = None) -> None:
    """Log ``page`` in through the login form (the personas' password is ``pw-<name>``) and
    wait for the overview."""
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password if password is not None else f"pw-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


@pytest.fixture
def console(live_server, admin_user, monkeypatch, settings):
    """``open(width, debug)``: a page logged in as the admin (ada), the live server rendering
    with ``DEBUG`` as asked (the htmx script tag adds django-htmx's debug script when it is
    on); ``page.errors`` collects the page's script errors."""
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # still plain synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])

        def open_page(width: int, debug: bool):
            settings.DEBUG = debug  # the live server reads the same settings
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.errors = []
            page.on("pageerror", lambda exc: page.errors.append(str(exc)))
            login(page, live_server.url)
            return page

        yield open_page
        browser.close()
