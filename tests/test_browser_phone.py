"""The console at phone width (390 px) and desktop width (1400 px): no page is wider than the
window, the navigation wraps, a skip link leads to the content, and the edit form works in a
real browser (issue 14). Screenshots go to ``var/screenshots/phone-*`` / ``desk-*``."""

import pytest

from memories import services
from sessions.services import session_append, session_create
from tests.test_browser import ARGS, CHROMIUM, SHOTS, pytestmark  # noqa: F401  (the markers)

LONG = ("The release checklist for v2.6.0 says: send the notice from "
        "no-reply@mail.harbor.example, then run the migration "
        "harbor_accounts_0042_split_billing_address_and_shipping_address_tables before noon, "
        "and page the on-call engineer if anything fails. " * 3)
OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.fixture
def pages(admin_user):
    m, _ = services.memory_create(user_id="team-harbor", content=LONG, tags=["release", "ops"],
                                  metadata={"ticket": "HARBOR-1234567890-release-checklist"})
    services.memory_update(memory_id=m.memory_id, actor=admin_user, reason="typo",
                           content=LONG.replace("noon", "12:00"))
    for n in range(6):
        services.memory_create(user_id=f"namespace-with-a-long-name-{n}",
                               content=f"Customer {n} prefers e-mail over phone calls")
    session_create(user_id="team-harbor", session_id="s-phone")
    session_append(session_id="s-phone", messages=[{"role": "user", "content": LONG}])
    return {
        "overview": "/", "memories": "/memories/", "detail": f"/memories/{m.memory_id}/",
        "sessions": "/sessions/", "session": "/sessions/s-phone/",
        "search": "/search/?user_id=team-harbor&q=release+checklist",
        "index": "/index/", "activity": "/activity/", "policy": "/index/policy/",
        "tokens": "/tokens/", "lab": "/lab/",
        "compare": "/search/compare/?user_id=team-harbor&q=release",
    }, m


def _login(page, base):
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-ada")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


@pytest.mark.parametrize("width", [390, 1400])
def test_no_main_page_is_wider_than_the_window(live_server, monkeypatch, pages, width):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    urls, _ = pages
    wide = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 860})
        _login(page, live_server.url)
        for name, url in urls.items():
            page.goto(live_server.url + url)
            page.screenshot(path=str(SHOTS / f"{'phone' if width < 500 else 'desk'}-{name}.png"),
                            full_page=True)
            if not page.evaluate(OVERFLOW):
                wide.append((name, page.evaluate("document.documentElement.scrollWidth")))
        browser.close()
    assert not wide, f"pages wider than {width} px: {wide}"


def test_skip_link_and_edit_form_on_a_phone(live_server, monkeypatch, pages):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    urls, memory = pages
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 860})
        _login(page, live_server.url)
        page.goto(live_server.url + urls["detail"])
        page.keyboard.press("Tab")  # the first stop is the skip link
        assert page.evaluate("document.activeElement.className") == "skip-link"
        assert page.locator(".skip-link").is_visible()
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "main"
        # The whole content is readable: the content box is not cut (no hidden overflow).
        box = page.locator("#memory-content")
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth")
        page.click("#edit-details summary")
        page.fill("#edit_content", "Release notes go out from no-reply@mail.harbor.example.")
        page.fill("#edit_reason", "shorter")
        page.click("#edit-form button[type=submit]")
        page.wait_for_selector("#version-badge:has-text('v3')")
        assert "no-reply@mail.harbor.example." in page.inner_text("#memory-content")
        assert page.evaluate(OVERFLOW)
        page.screenshot(path=str(SHOTS / "phone-detail-edited.png"), full_page=True)
        browser.close()
    memory.refresh_from_db()
    assert memory.version == 3 and memory.content.startswith("Release notes")


# Every visible cell of a stacked table (a table whose header row is hidden) shows its label:
# a data-label the CSS renders before it. Exempt: a cell spanning the whole row (a message)
# and a cell under an empty header (a row's own button or checkbox).
UNLABELLED_CELLS = """() => {
  const bad = [];
  for (const table of document.querySelectorAll('table')) {
    if (table.getBoundingClientRect().height === 0) continue;
    const head = table.querySelector('thead tr');
    if (head && head.getBoundingClientRect().height > 0) continue;
    const heads = head ? [...head.children].map(th => th.textContent.trim()) : [];
    for (const tr of table.querySelectorAll('tbody tr')) {
      let col = 0;
      for (const td of tr.children) {
        const span = td.colSpan || 1;
        const shown = td.getBoundingClientRect().height > 0 && td.textContent.trim() !== '';
        const label = getComputedStyle(td, '::before').content;
        if (shown && span < heads.length && heads[col] !== ''
            && (!td.dataset.label || label === 'none' || label === 'normal')) {
          bad.push((table.id || table.className) + ' col ' + col + ': '
                   + td.textContent.trim().slice(0, 40));
        }
        col += span;
      }
    }
  }
  return bad;
}"""


@pytest.fixture
def demo_pages(admin_user):
    """The demo's data (sessions, runs, judgments, consolidation groups) and the pages that
    show it in tables."""
    from django.core.management import call_command

    from lab.models import EvalRun

    call_command("load_demo")
    first, second = EvalRun.objects.order_by("pk")[:2]
    return {
        "memories": "/memories/", "sessions": "/sessions/", "index": "/index/",
        "run": f"/lab/runs/{first.pk}/", "compare-runs": f"/lab/runs/compare/?a={first.pk}&b={second.pk}",
        "judgments": "/lab/judgments/",
    }


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_every_stacked_table_cell_keeps_its_label(live_server, monkeypatch, settings,
                                                  demo_pages, debug):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.DEBUG = debug  # the live server reads the same settings
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 860})
        _login(page, live_server.url)
        unlabelled, tables = {}, 0
        for width in (390, 1400):
            page.set_viewport_size({"width": width, "height": 860})
            for name, url in demo_pages.items():
                page.goto(live_server.url + url)
                for n, table in enumerate(page.locator("table").all()):
                    box = table.bounding_box()  # the table's first rows, not a page of rows
                    if box:
                        page.screenshot(path=str(SHOTS / f"table-{name}-{n}-{width}.png"),
                                        full_page=True, clip={"x": 0, "y": box["y"],
                                                              "width": width, "height": 640})
                    tables += 1
                if bad := page.evaluate(UNLABELLED_CELLS):
                    unlabelled[f"{name}@{width}"] = bad
        browser.close()
    assert tables >= 2 * 9 and unlabelled == {}
