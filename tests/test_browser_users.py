"""In headless Chromium, with DEBUG on (as ``scripts/run`` ships) and off, at 1400 and 390 px:
the Users page (create a login with a one-time link, a role change through its confirmation,
deactivate) and the Tokens page's expiry and last use. Screenshots go to
``$SCREENSHOTS_DIR`` (default ``var/screenshots``), ``users-*`` and ``tokens-expiry-*``."""

import datetime as dt
import os
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from accounts.models import ApiToken
from accounts.roles import role_of
from accounts.tokens import token_create, token_lookup
from tests.browser import MARKS, MODES, SHOTS

pytestmark = MARKS

OUT = Path(os.environ.get("SCREENSHOTS_DIR", SHOTS))
FITS = "document.documentElement.scrollWidth <= window.innerWidth"


def _shot(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("debug", MODES)
def test_an_admin_creates_a_login_changes_a_role_and_deactivates_a_user(
    console, live_server, editor, width, debug  # noqa: F811  (the imported fixture)
):
    page = console(width, debug)
    tag = f"{width}-{'debug' if debug else 'prod'}"
    page.click("nav.mainnav a:text('Users')")
    page.wait_for_selector("#user-table")
    page.fill("#user_username", "grace")
    page.select_option("#user_role", "viewer")
    page.fill("#user_password", "short")
    page.fill("#user_password2", "short")
    page.click("#user-form button[type=submit]")
    assert "too short" in page.inner_text("#password-error")  # inline, the page kept
    page.fill("#user_password", "")
    page.fill("#user_password2", "")
    page.click("#user-form button[type=submit]")
    page.wait_for_selector("#password-link")
    assert "/accounts/reset/" in page.input_value("#new-link")
    assert page.evaluate(FITS), "the page scrolls sideways"
    _shot(page, f"users-created-{tag}")
    page.reload()  # a refresh creates nothing and shows the link no more
    assert page.locator("#password-link").count() == 0
    assert User.objects.filter(username="grace").count() == 1

    row = page.locator("tr[data-username='eddie']")
    row.locator("select").select_option("admin")
    row.locator("button:text('Change…')").click()
    page.wait_for_selector("#role-confirm")
    assert "Change eddie from editor to admin?" in page.inner_text("#role-confirm")
    _shot(page, f"users-role-confirm-{tag}")
    assert role_of(User.objects.get(username="eddie")) == "editor"  # not yet
    page.click("#role-confirm button[type=submit]")
    page.wait_for_selector("#user-table")
    assert "eddie is now admin (was editor)." in page.inner_text("#messages")

    token = token_create(user=User.objects.get(username="eddie"))
    page.locator("tr[data-username='eddie'] button:text('Deactivate')").click()
    page.wait_for_selector("tr[data-username='eddie'] button:text('Reactivate')")
    assert "deactivated" in page.inner_text("tr[data-username='eddie']")
    assert token_lookup(token) is None
    assert page.evaluate(FITS), "the page scrolls sideways"
    _shot(page, f"users-deactivated-{tag}")
    assert page.errors == []


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("debug", MODES)
def test_the_tokens_page_shows_expiry_and_last_use(
    console, live_server, editor, width, debug  # noqa: F811  (the imported fixture)
):
    used = token_create(user=editor, name="used")
    token_lookup(used)
    old = token_create(user=editor, name="old", expires_at=timezone.now() - dt.timedelta(days=1))
    page = console(width, debug)
    tag = f"{width}-{'debug' if debug else 'prod'}"
    page.goto(f"{live_server.url}/tokens/")
    page.fill("#token_username", "eddie")
    page.fill("#token_expires_in_days", "30")
    page.fill("#token_name", "monthly")
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#token-created")
    assert page.url.endswith("/tokens/created/")
    assert "Expires" in page.inner_text("#token-expiry")
    _shot(page, f"tokens-expiry-created-{tag}")
    page.reload()  # a refresh creates nothing, and the token is not shown again
    page.wait_for_selector("#token-table")
    assert page.locator("#new-token").count() == 0 and ApiToken.objects.count() == 3
    expired_row = page.locator(f"tr[data-prefix='{old[:10]}']")
    assert "expired" in expired_row.inner_text()
    used_row = page.locator(f"tr[data-prefix='{used[:10]}']")
    assert used_row.locator("[data-col=last-used]").inner_text() != "never"
    assert page.evaluate(FITS), "the page scrolls sideways"
    _shot(page, f"tokens-expiry-list-{tag}")
    assert page.errors == []
