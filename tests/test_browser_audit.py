"""The audit trail and the Index page in a real browser (headless Debian Chromium, Playwright
sync API, pytest-django's live server, real Redis): a diff between v1 and v3, a rollback
from the detail page, a reindex whose progress bar reaches "finished", and a tour of the new
pages for screenshots in ``var/screenshots/``.

The worker: rq installs signal handlers when it starts, which only the main thread may do,
and the live server already runs in a thread of its own. So after the click the test itself
(the main thread) runs a burst worker, ``SimpleWorker`` so the job runs in this process
instead of a fork next to Playwright's threads; the page's progress fragment, polling every
second, then reaches "finished" by itself.
"""

import datetime as dt
import shutil

import django_rq
import pytest
from rq import SimpleWorker

from memories import queue as job_queue
from memories import services
from memories.models import AuditEvent, Memory
from sessions.services import session_append, session_create
from tests import test_browser
from tests.browser import login
from tests.test_browser import CHROMIUM, shot

# The same headless-Chromium page fixture as tests/test_browser.py (login, error capture).
browser_page = test_browser.browser_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.usefixtures("empty_queues"),
    pytest.mark.skipif(
        not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
    ),
]


def test_diff_rollback_and_reindex(browser_page, live_server, admin_user, editor):
    page, errors = browser_page
    base = live_server.url
    memory, _ = services.memory_create(
        user_id="alice",
        content="Team lunch is at Cafe Lumen on Fridays",
        importance=0.5,
        tags=["food"],
        actor=editor,
    )
    services.memory_update(
        memory_id=memory.memory_id, actor=editor, importance=0.8, reason="people care"
    )
    services.memory_update(
        memory_id=memory.memory_id,
        actor=editor,
        content="Team lunch moved to Noodle Barn on Thursdays",
        tags=["food", "team"],
        reason="the cafe closed",
    )
    for n in range(4):
        services.memory_create(user_id="bob", content=f"bob keeps note {n}", actor=editor)
    login(page, base, "ada")

    # Diff v1 → v3 from the detail page's compare form.
    page.goto(f"{base}/memories/{memory.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.select_option("#diff_a", "1")
    page.select_option("#diff_b", "3")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(f"**/memories/{memory.memory_id}/diff/?a=1&b=3")
    assert page.inner_text("#content-diff del") == "is at Cafe Lumen "
    assert [t.strip() for t in page.locator("#content-diff ins").all_inner_texts()] == [
        "moved to Noodle Barn",
        "Thursdays",
    ]
    changed = page.locator("#field-diff tr.changed th").all_inner_texts()
    assert any(c.startswith("Importance") for c in changed)
    assert any(c.startswith("Tags") for c in changed)
    shot(page, "10-diff-v1-v3")
    # Changing a version picker swaps only #diff (htmx) and pushes the URL.
    page.evaluate("() => { window.__noReload = true; }")
    page.select_option("#diff_a", "2")
    page.wait_for_url("**/diff/?a=2&b=3")
    page.wait_for_selector("#field-diff")
    assert page.evaluate("() => window.__noReload") is True

    # Roll back to v1 from the detail page (htmx swaps the panel).
    page.goto(f"{base}/memories/{memory.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.select_option("#rollback_version", "1")
    page.fill("#rollback_reason", "the move was cancelled")
    page.click("#rollback-form button[type=submit]")
    page.wait_for_selector("#version-4[data-kind=rollback]")
    assert page.inner_text("#memory-content") == "Team lunch is at Cafe Lumen on Fridays"
    assert page.inner_text("#importance-value") == "0.50"
    assert "Rolled back to version 1" in page.inner_text("#messages")
    shot(page, "11-detail-after-rollback")
    stored = Memory.objects.get(pk=memory.memory_id)
    assert (stored.version, stored.content, stored.importance) == (
        4,
        "Team lunch is at Cafe Lumen on Fridays",
        0.5,
    )

    # Reindex everything from the Index page; the progress fragment polls itself.
    page.goto(f"{base}/index/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.click("#reindex-form button[type=submit]")
    page.wait_for_selector("#job-area #job-progress[data-status=queued]")
    # The answer's job-started event reloaded the health fragment: the history lists the job.
    page.wait_for_selector("#job-history .job-queued")
    shot(page, "12-index-reindex-queued")
    django_rq.get_worker(*job_queue.queue_names(),
                         worker_class=SimpleWorker).work(burst=True)
    page.wait_for_selector("#job-progress[data-status=finished]", timeout=15000)
    assert "100%" in page.inner_text("#job-progress")
    assert page.get_attribute("#job-progress", "hx-trigger") is None  # polling stopped
    # The job's end refreshed the health numbers (job-done event) and the history lists it.
    page.wait_for_function("() => document.querySelector('#stat-drift').textContent === '0'")
    shot(page, "13-index-reindex-finished")
    event = AuditEvent.objects.get(action="reindex")
    assert (event.actor, event.target) == ("ada", "*")
    page.reload()
    assert event.data["job_id"] in page.inner_text("#job-history")
    assert "finished" in page.inner_text("#job-history")
    shot(page, "14-index-history")

    assert errors == [], errors


def test_a_tour_of_the_new_pages(browser_page, live_server, admin_user, editor):
    """Bulk forget in the list, a message promoted from a transcript, and the pages an
    admin sees (activity, policy, tokens, synonyms, purge confirmation), for screenshots."""
    page, errors = browser_page
    base = live_server.url
    for n in range(6):
        services.memory_create(
            user_id="alice",
            content=f"alice's reminder number {n}: renew the parking permit",
            importance=0.3 + n / 10,
            actor=editor,
        )
    for content, importance in [
        ("old parking garage code 1234", 0.1),
        ("offsite venue shortlist: Lisbon conference hotel near the river", 0.6),
        ("offsite venue Lisbon: the conference hotel near the river is booked", 0.7),
    ]:
        services.memory_create(
            user_id="alice",
            content=content,
            importance=importance,
            created_at=dt.datetime(2024, 5, 1, tzinfo=dt.UTC),
            actor=editor,
        )
    working, _ = services.memory_create(
        user_id="alice",
        content="Draft: the offsite is in Lisbon, 2025-10-02",
        type="working",
        conversation_id="s-demo",
        actor=editor,
    )
    session_create(user_id="alice", session_id="s-demo", agent_id="helper")
    session_append(
        session_id="s-demo",
        messages=[
            {"role": "user", "content": "I am allergic to peanuts, remember that."},
            {"role": "assistant", "content": "Noted: no peanuts."},
        ],
    )
    session_create(user_id="bob", session_id="s-cold")
    from sessions import store as session_store
    from sessions.models import Session

    session_store.window_drop(session_store.keys(Session.objects.get(pk="s-cold")))
    login(page, base, "ada")

    # Bulk forget two memories (htmx re-renders the rows with a message).
    page.goto(f"{base}/memories/?user_id=alice")
    page.wait_for_function("() => window.htmx !== undefined")
    boxes = page.locator("#memory-rows input[name=memory_ids]")
    boxes.nth(0).check()
    boxes.nth(1).check()
    page.select_option("#bulk_action", "forget")
    page.fill("#bulk_reason", "duplicates")
    page.click("#bulk-form button[type=submit]")
    page.wait_for_selector("#messages .alert-success")
    assert "Forgot 2 memories." in page.inner_text("#messages")
    assert page.locator("#memory-rows tr.forgotten").count() == 2
    shot(page, "15-list-after-bulk")
    page.click("#select-all")
    assert page.locator("#memory-rows input[name=memory_ids]:checked").count() == 10

    # Promote a message from the transcript; the session lists its memories.
    page.goto(f"{base}/sessions/")
    assert "cold" in page.inner_text("tr[data-session-id=s-cold]")
    shot(page, "16-sessions-hot-cold")
    page.goto(f"{base}/sessions/s-demo/")
    page.wait_for_function("() => window.htmx !== undefined")
    page.click("#msg-1 .promote-message button")
    page.wait_for_selector("#msg-1 .promoted a")
    promoted = page.inner_text("#msg-1 .promoted a")
    assert Memory.objects.get(pk=promoted).metadata["promoted_from"]["seq"] == 1
    page.reload()
    assert promoted in page.inner_text("#session-memories")
    assert working.memory_id in page.inner_text("#session-memories")
    shot(page, "17-session-promoted")

    page.goto(f"{base}/memories/{working.memory_id}/")
    shot(page, "18-detail-working-estimate")
    page.click("#purge-link")
    page.wait_for_url(f"**/memories/{working.memory_id}/purge/")
    shot(page, "19-purge-confirm")

    page.goto(f"{base}/activity/")
    shot(page, "20-activity")
    page.goto(f"{base}/index/policy/?user_id=alice")
    assert page.locator("#plan-forget + table tr[data-memory-id]").count() == 1
    assert page.locator("#consolidation-plan .group").count() == 1
    shot(page, "21-policy")
    page.goto(f"{base}/tokens/")
    page.fill("#token_username", "eddie")
    page.fill("#token_name", "deploy bot")
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#new-token")
    assert page.input_value("#new-token").startswith("mc_")
    shot(page, "22-token-created")
    page.goto(f"{base}/tokens/")
    shot(page, "23-tokens")
    page.goto(f"{base}/search/synonyms/")
    page.fill("#id_text", "car, automobile\nlonely")
    page.click("#synonyms-form button[type=submit]")
    page.wait_for_selector("#synonyms-error")
    errors.clear()  # the browser logs that deliberate 400; nothing else may fail
    shot(page, "24-synonyms-error")

    assert errors == [], errors
