"""Consolidation in a real browser (headless Debian Chromium), at 1400 and 390 px: the policy
page's groups with merged text and similarity, Apply one group with a reason, Undo
consolidation on the merged memory's page, and the undo of a forgetting-policy run.
Screenshots go to ``var/screenshots/consolidation-*.png``."""

import datetime as dt
import shutil

import pytest
from rq import SimpleWorker

from memories import queue as job_queue
from memories import services
from memories.models import Memory
from tests import test_browser
from tests.test_browser import CHROMIUM, shot
from tests.test_browser_audit import login

browser_page = test_browser.browser_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.usefixtures("empty_queues"),
    pytest.mark.skipif(
        not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
    ),
]

OLD = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
NOTES = [
    "Harbor v2.6.0 ships on Thursday. Replies come from no-reply@mail.harbor.example.",
    "Harbor v2.6.0 ships on Thursday.",
    "Kestrel Health renews its Enterprise plan on 1 March; the account manager sends the quote.",
    "Oakridge Dental renews its Enterprise plan on 1 March; the account manager sends the quote.",
    "陈静跟进青山零售的续约，日期是 3 月 1 日。",
    "青山零售的续约日期是 3 月 1 日，陈静跟进。",
]


def _no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.parametrize("width", [1400, 390])
def test_apply_a_group_and_undo_it(browser_page, live_server, admin_user, width):
    page, errors = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    base = live_server.url
    for n, text in enumerate(NOTES):
        services.memory_create(user_id="harbor", content=text, importance=0.8,
                               created_at=OLD + dt.timedelta(minutes=n))
    login(page, base, "ada")
    page.goto(f"{base}/index/policy/?user_id=harbor")
    page.wait_for_function("() => window.htmx !== undefined")
    groups = page.locator("#consolidation-plan article.group")
    assert groups.count() == 2  # the two customers are not merged
    first = groups.nth(0)
    assert "no-reply@mail.harbor.example" in first.locator(".merged-text").inner_text()
    assert "similarity" in first.inner_text()
    shot(page, f"consolidation-policy-{width}")
    group_id = first.get_attribute("data-group-id")
    first.locator("button:has-text('Apply')").click()
    # The browser's own required-field check stops an empty reason; nothing is written.
    assert Memory.objects.filter(source="consolidation").count() == 0
    first.locator("input[name=reason]").fill("same release note")
    first.locator("button:has-text('Apply')").click()
    page.wait_for_selector(f"#group-{group_id} .alert-success")
    # The head is fresh: one group left, and Apply all names only that one.
    page.wait_for_function("() => document.querySelector('#apply-consolidate')"
                           ".textContent.trim() === 'Apply all 1'")
    assert page.locator("#consolidation-count").inner_text() == "1"
    assert page.locator(f"#consolidation-plan input[name=group_id][value='{group_id}']").count() == 0
    shot(page, f"consolidation-applied-{width}")
    merged = Memory.objects.get(source="consolidation")
    assert merged.content == NOTES[0]

    page.goto(f"{base}/memories/{merged.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.locator("#undo-consolidation-form").is_visible()
    assert _no_horizontal_scroll(page) or width == 390  # phones: another engineer's layout pass
    shot(page, f"consolidation-merged-{width}")
    page.fill("#undo_reason", "merged too early")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#undo-consolidation-form button[type=submit]")
    page.wait_for_selector("text=Consolidation undone")
    shot(page, f"consolidation-undone-{width}")
    assert Memory.objects.filter(source="consolidation", deleted_at__isnull=True).count() == 0
    assert Memory.objects.filter(user_id="harbor", deleted_at__isnull=True).count() == 6
    assert errors == []


def test_undo_a_policy_run_from_the_policy_page(browser_page, live_server, admin_user):
    page, errors = browser_page
    base = live_server.url
    for n in range(3):
        services.memory_create(user_id="harbor", content=f"stale parking code {n}",
                               importance=0.05, created_at=OLD)
    login(page, base, "ada")
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{base}/index/policy/?user_id=harbor")
        page.wait_for_function("() => window.htmx !== undefined")
        if width == 1400:
            page.once("dialog", lambda dialog: dialog.accept())
            page.click("#apply-cleanup")
            page.wait_for_selector("#policy-job [data-status]")
            # The live server runs in a thread: the job runs here, in the main thread.
            import django_rq

            django_rq.get_worker(*job_queue.queue_names("default"),
                         worker_class=SimpleWorker).work(burst=True)
            assert Memory.objects.filter(user_id="harbor", deleted_at__isnull=True).count() == 0
            page.goto(f"{base}/index/policy/?user_id=harbor")
        shot(page, f"consolidation-runs-{width}")
    page.fill("#cleanup-runs input[name=reason]", "policy was too eager")
    page.click("#cleanup-runs button:has-text('Undo run')")
    page.wait_for_selector("text=undone by ada")
    shot(page, "consolidation-run-undone-390")
    assert Memory.objects.filter(user_id="harbor", deleted_at__isnull=True).count() == 3
    assert errors == []


def test_apply_all_leaves_a_fresh_section_once_its_job_is_done(browser_page, live_server,
                                                                admin_user):
    page, errors = browser_page
    base = live_server.url
    for n, text in enumerate(NOTES):
        services.memory_create(user_id="harbor", content=text, importance=0.8,
                               created_at=OLD + dt.timedelta(minutes=n))
    login(page, base, "ada")
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{base}/index/policy/?user_id=harbor")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.locator("#apply-consolidate").inner_text() == "Apply all 2"
    page.fill("#all_reason", "duplicates")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#apply-consolidate")
    page.wait_for_selector("#policy-job [data-status]")
    import django_rq

    django_rq.get_worker(*job_queue.queue_names("default"),
                         worker_class=SimpleWorker).work(burst=True)
    assert Memory.objects.filter(source="consolidation").count() == 2
    # The finished job's progress reloads the section: no group, no Apply all any more.
    page.wait_for_selector("#no-groups")
    assert page.locator("#apply-consolidate").count() == 0
    assert page.locator("#consolidation-count").inner_text() == "0"
    assert page.locator("#policy-job [data-status=finished]").count() == 1
    assert errors == []
