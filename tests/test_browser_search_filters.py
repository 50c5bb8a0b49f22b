"""The recall filters (since, until, author, tags) on the search and compare pages, in
Chromium at 1400 and 390 px: filled in, submitted, the results narrowed to what passes, the
page no wider than the window, and the time a query names shown beside the results.
Screenshots go to ``var/screenshots/filters-*``."""

import datetime as dt

import pytest

from memories import services
from tests.test_browser import ARGS, CHROMIUM, SHOTS, pytestmark  # noqa: F401  (the markers)
from tests.test_browser_phone import OVERFLOW, _login

NS = "team-harbor"


@pytest.fixture
def harbor(admin_user):
    def make(content, day, author, tags):
        return services.memory_create(
            user_id=NS, content=content, author=author, tags=tags,
            created_at=dt.datetime(2026, 11, day, 9, 0, tzinfo=dt.UTC))[0].memory_id

    return {
        "ana-ops": make("Redis timeout in the billing worker, raised to 5 s", 10, "ana",
                        ["ops", "redis"]),
        "ana-old": make("Redis timeout seen once in the staging cluster", 2, "ana", ["ops"]),
        "ben-ops": make("Redis timeout paged the on-call engineer at night", 12, "ben",
                        ["ops", "redis"]),
    }


def _shown(page) -> set[str]:
    return set(page.eval_on_selector_all(
        "#results [data-memory-id]", "rows => rows.map(r => r.dataset.memoryId)"))


@pytest.mark.parametrize("width", [1400, 390])
def test_it_filters_recall_on_the_search_and_compare_pages(live_server, monkeypatch, harbor,
                                                          width):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    tag = "phone" if width < 500 else "desk"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        _login(page, live_server.url)

        page.goto(f"{live_server.url}/search/?user_id={NS}&q=redis+timeout&limit=10")
        assert _shown(page) == set(harbor.values())
        page.fill("#id_author", "ana")
        page.fill("#id_since", "2026-11-05")
        page.fill("#id_until", "2026-11-30")
        page.fill("#id_tags", "ops, redis")
        page.click("#search-form button[type=submit]")
        sync_api.expect(page.locator("#results [data-memory-id]")).to_have_count(1)
        assert _shown(page) == {harbor["ana-ops"]}
        assert "author=ana" in page.url and "since=2026-11-05" in page.url  # shareable
        assert page.evaluate(OVERFLOW)
        page.screenshot(path=str(SHOTS / f"filters-{tag}-search.png"), full_page=True)

        # Until before since: a form error in the page, no results.
        page.fill("#id_until", "2026-11-01")
        page.click("#search-form button[type=submit]")
        page.wait_for_selector("#results .errorlist, #results .alert-error")
        assert _shown(page) == set()

        # A time named in the query, shown beside the results.
        page.goto(f"{live_server.url}/search/?user_id={NS}&q=redis+timeout+on+November+12"
                  "&limit=10")
        assert "time: 2026-11-12..2026-11-12" in page.inner_text("#results")
        assert page.eval_on_selector_all(
            "#results [data-memory-id]", "rows => rows[0].dataset.memoryId") == harbor["ben-ops"]

        page.goto(f"{live_server.url}/search/compare/?user_id={NS}&q=redis+timeout"
                  "&a=bm25&b=context")
        page.fill("#compare-form #id_author", "ben")
        page.click("#compare-form button[type=submit]")
        page.wait_for_url("**author=ben**")
        for side in ("a", "b"):
            ids = set(page.eval_on_selector_all(
                f"#column-{side} [data-memory-id]", "rows => rows.map(r => r.dataset.memoryId)"))
            assert ids == {harbor["ben-ops"]}, side
        assert page.evaluate(OVERFLOW)
        page.screenshot(path=str(SHOTS / f"filters-{tag}-compare.png"), full_page=True)
        browser.close()
