"""What the browser tests share: the Chromium they drive, where screenshots go, their
markers, the login, and two fixtures (registered by tests/conftest.py): ``chromium``, one
browser per test module, and ``console``, a page logged in as the admin with ``DEBUG`` as
the test asks."""

import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"  # Debian's (Playwright's own download fails)
SHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"
MODES = [pytest.param(True, id="debug-on"), pytest.param(False, id="debug-off")]
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

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


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for the tests of a module: starting Playwright and launching the
    browser cost more than most tests' own steps. Each test opens pages in contexts of its
    own (no cookie or storage outlives it) and closes them."""
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop in this thread; the tests' own ORM calls are
    # still plain synchronous code, so Django may allow them.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            yield browser
            browser.close()


@pytest.fixture
def console(chromium, live_server, admin_user, settings):
    """``open(width, debug)``: a page logged in as the admin (ada), the live server rendering
    with ``DEBUG`` as asked (the htmx script tag adds django-htmx's debug script when it is
    on); ``page.errors`` collects the page's script errors."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    pages = []

    def open_page(width: int, debug: bool):
        settings.DEBUG = debug  # the live server reads the same settings
        page = chromium.new_page(viewport={"width": width, "height": 900})
        pages.append(page)
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        login(page, live_server.url)
        return page

    yield open_page
    for page in pages:
        page.context.close()
