"""The Usage page in headless Chromium, as ``scripts/run`` ships it (``DEBUG=1``) and with
``DEBUG=0``, at 1400 and 390 px: three charts drawn, the tables filled, a change of the days
swapping the figures in place with the address following, nothing wider than the window."""

import pytest

from integrations.metrics.registry import REQUEST_SECONDS
from tests.browser import MARKS, MODES, SHOTS
from tests.conftest import ApiClient
from tests.helpers import create

pytestmark = MARKS

OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.fixture
def traffic(editor):
    create("Rosa teaches piano on Tuesdays", actor=editor)
    client = ApiClient(editor, name="tutor-bot")
    for query in ("piano", "Rosa", "Tuesdays piano lessons"):
        assert client.post("/recall", {"user_id": "u-a", "query": query}).status_code == 200


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("debug", MODES)
def test_the_usage_page_draws_its_charts_and_follows_its_filters(console, live_server,
                                                                   traffic, width, debug):
    # The metrics are the process's: a view's pattern as long as any this suite serves.
    REQUEST_SECONDS.labels(view="memories/<str:memory_id>/versions/<int:version>/restore/",
                           method="POST", status="200").observe(0.01)
    page = console(width, debug)
    page.goto(f"{live_server.url}/usage/")
    assert page.locator("figure.day-chart svg").count() == 3
    assert page.locator("figure.day-chart").first.is_visible()
    assert page.locator("#chart-1 rect").count() == 14  # one bar a day
    assert "tutor-bot (eddie)" in page.inner_text("#usage-tokens")
    rows = page.locator("#usage-days tbody tr")
    assert rows.count() == 1  # only the days with a recall or a write
    assert rows.first.locator("td").all_inner_texts()[1:3] == ["3", "1"]  # recalls, writes
    assert page.locator("#id_days").input_value() == "14"
    assert page.evaluate(OVERFLOW), page.evaluate("document.documentElement.scrollWidth")
    page.screenshot(path=str(SHOTS / f"usage-{width}-{'debug' if debug else 'prod'}.png"),
                    full_page=True)

    page.wait_for_function("() => window.htmx !== undefined")
    page.select_option("#id_days", "7")
    page.wait_for_url("**/usage/?*days=7*")
    page.wait_for_function("() => document.querySelectorAll('#chart-1 rect').length === 7")
    assert page.evaluate(OVERFLOW)
    assert page.errors == []
