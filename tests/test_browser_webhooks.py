"""The Webhooks pages in headless Chromium: add an endpoint with the form, press "Send test
event" (htmx swaps the delivery log), deliver with a burst worker in this thread (see
tests/test_browser_audit.py for why), refresh the log; screenshots at 1400 and 390 px in
``var/screenshots/``."""

import shutil

import pytest
from rq import SimpleWorker

from memories import queue as job_queue
from tests import test_browser
from tests.test_browser import CHROMIUM, shot
from tests.test_browser_audit import login
from tests.test_webhooks import Receiver

browser_page = test_browser.browser_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.usefixtures("empty_queues"),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed"),
]


def test_add_an_endpoint_and_send_a_test_event(browser_page, live_server, admin_user, settings):

    settings.WEBHOOKS_ALLOW_PRIVATE = True
    page, errors = browser_page
    receiver = Receiver((204,))
    try:
        base = live_server.url
        login(page, base, admin_user.username)
        page.click("nav >> text=Webhooks")
        page.fill("#id_url", receiver.url)
        page.fill("#id_description", "Support desk sync")
        page.fill("#id_namespaces", "alice, team-support")
        page.click("#webhook-form button[type=submit]")
        page.wait_for_selector("#delivery-rows")
        page.click("#send-test")
        page.wait_for_selector("#delivery-table >> text=pending")
        SimpleWorker([job_queue.get_queue("default")],
                     connection=job_queue.get_connection()).work(burst=True)
        page.click("#delivery-rows >> text=Refresh")
        page.wait_for_selector("#delivery-table >> text=delivered")
        assert [e["type"] for e in receiver.events()] == ["webhook.test"]
        page.click("summary >> text=Show")
        for width in (1400, 390):
            page.set_viewport_size({"width": width, "height": 900})
            shot(page, f"webhook-detail-{width}")
            page.goto(f"{base}/integrations/webhooks/")
            shot(page, f"webhooks-{width}")
            page.go_back()
        assert errors == []
    finally:
        receiver.close()
