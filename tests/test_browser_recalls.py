"""The Recalls pages in Chromium, DEBUG on (as ``scripts/run`` ships the console) and off, at
1400 and 390 px: the log filtered in place, one recall as served, replayed with another
profile beside it (rank changes), a result graded in place, the query added to a new query
set; and the same without JavaScript. No page wider than the window, no script error, no
Content-Security-Policy violation. Screenshots go to ``/tmp/shots/``."""

import datetime as dt
import re
from pathlib import Path

import pytest

from lab.models import Judgment, QuerySet
from memories import services
from memories.models import Memory
from recalls.act import recall_traced
from tests.browser import MARKS, MODES, login
from tests.test_browser_gone import _shows, _still_the_console
from tests.test_browser_phone import OVERFLOW

pytestmark = MARKS
SHOTS = Path("/tmp/shots")
VIOLATION = re.compile(r"Content Security Policy|Refused to (execute|apply|load|evaluate)",
                       re.IGNORECASE)
# (content, importance, age in days): "deploy" ranks them differently under bm25 and keyword.
NOTES = [
    ("Deploy checklist: deploy to staging, run the smoke tests, then deploy to production",
     0.15, 40),
    ("The deploy key for the payments service lives in the team vault; rotate it monthly",
     0.95, 3),
    ("A Friday deploy needs a second reviewer and a rollback plan", 0.8, 1),
    ("Old notes about the deploy script that was replaced in 2023", 0.05, 300),
]


def _shot(page, name: str, debug: bool, width: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    mode = "debug" if debug else "nodebug"
    page.screenshot(path=str(SHOTS / f"recalls-{name}-{mode}-{width}.png"), full_page=True)


def _recalls(actor) -> str:
    """Memories of ``team`` and two traced recalls of them (one of another namespace);
    the id of the ``deploy`` recall."""
    now = dt.datetime.now(dt.UTC)
    for content, importance, days in NOTES:
        services.memory_create(user_id="team", content=content, importance=importance,
                               created_at=now - dt.timedelta(days=days), actor=actor,
                               agent_id="planner")
    services.memory_create(user_id="other-team", content="Lunch order for the offsite")
    recall_traced(actor="planner-bot", interface="mcp", count_hits=False, user_id="other-team",
                  query="lunch order", limit=5)
    _, recall_id = recall_traced(actor="planner-bot", interface="rest", count_hits=False,
                                 user_id="team", query="deploy", limit=6, profile="bm25",
                                 agents=["planner"])
    return recall_id


def _served(page) -> list[str]:
    return page.eval_on_selector_all("#column-served li[data-memory-id]",
                                     "els => els.map(e => e.dataset.memoryId)")


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_filter_open_replay_grade_and_add_to_a_query_set(console, live_server, admin_user,
                                                         debug, width):
    base = live_server.url
    recall_id = _recalls(admin_user)
    # Edited after the recall: the page shows the text served, marked as edited since.
    old = Memory.objects.get(content=NOTES[3][0])
    services.memory_update(memory_id=old.memory_id, actor=admin_user, reason="clearer",
                           content="Old notes about the deploy script, replaced in 2023")
    page = console(width, debug)
    messages = []
    page.on("console", lambda msg: messages.append(msg.text))

    page.goto(f"{base}/recalls/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.locator("nav.mainnav a[aria-current=page]").inner_text() == "Recalls"
    assert page.locator("#recall-rows tr[data-recall-id]").count() == 2
    page.evaluate("() => { window.__noReload = true; }")
    page.fill("#id_user_id", "team")
    page.click("#recall-filters button[type=submit]")
    page.wait_for_function(
        "() => document.querySelectorAll('#recall-rows tr[data-recall-id]').length === 1")
    assert page.evaluate("() => window.__noReload") is True  # swapped in place
    assert "user_id=team" in page.url
    assert page.evaluate(OVERFLOW)
    _shot(page, "list", debug, width)

    page.click(f"#recall-rows tr[data-recall-id='{recall_id}'] a.recall-query")
    page.wait_for_url(f"{base}/recalls/{recall_id}/")
    assert page.inner_text("#recall-query") == "deploy"
    served = _served(page)
    assert len(served) == 4
    assert "planner" in page.inner_text("#recall-fields")
    assert page.inner_text(f"#served-{old.memory_id} .mark-edited") == "edited since (now v2)"
    assert "that was replaced in 2023" in page.inner_text(f"#served-{old.memory_id} .hit-text")
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "detail", debug, width)

    # Replay with another profile: the replayed column appears beside, with its moves.
    page.evaluate("() => { window.__noReload = true; }")
    page.select_option("#replay-profile select", "keyword")
    page.click("#replay-profile button[type=submit]")
    page.locator("#column-replay").wait_for(state="visible")
    assert page.evaluate("() => window.__noReload") is True
    assert "replay=profile" in page.url and "profile=keyword" in page.url
    assert page.locator("#column-replay .move.up, #column-replay .move.down").count() >= 2
    assert "Replayed now with keyword" in page.inner_text("#replay-summary")
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "replay", debug, width)

    # Grade the first served result 3: in place, both copies of it updated.
    first = served[0]
    page.click(f"#served-{first} .grade-btn[value='3']")
    page.wait_for_selector(f"#served-{first} .grade-btn[value='3'][aria-pressed='true']")
    page.wait_for_selector(f"#replay-{first} .grade-btn[value='3'][aria-pressed='true']")
    assert page.evaluate("() => window.__noReload") is True
    judgment = Judgment.objects.get()
    assert (judgment.user_id, judgment.query, judgment.memory_id, judgment.grade) == (
        "team", "deploy", first, 3)

    # Add the query to a new query set: the card answers in place.
    page.fill("#query-set-form input[name=name]", "deploys")
    page.click("#query-set-form button[type=submit]")
    _shows(page, "Added “deploy” to query set deploys.")
    assert page.locator("#holding-sets a").inner_text() == "deploys"
    assert QuerySet.objects.get(name="deploys").queries == ["deploy"]
    assert page.evaluate("() => window.__noReload") is True
    # An error shows on the form, in place.
    page.fill("#query-set-form input[name=name]", "deploys")
    page.click("#query-set-form button[type=submit]")
    _shows(page, "already exists")
    assert page.evaluate(OVERFLOW)
    _still_the_console(page)
    _shot(page, "graded", debug, width)

    # The memory's page says it was recalled and links the question.
    page.goto(f"{base}/memories/{first}/")
    assert "Recalled 1 time" in page.inner_text("#recall-summary")
    page.click(f"#recall-questions a[href='/recalls/{recall_id}/']")
    page.wait_for_url(f"{base}/recalls/{recall_id}/")
    assert page.evaluate(OVERFLOW)
    assert page.errors == []
    assert [m for m in messages if VIOLATION.search(m)] == []


@pytest.mark.parametrize("debug", MODES)
def test_the_recall_page_works_without_javascript(console, live_server, admin_user, debug):
    """JavaScript off: the filter, the replay and the grade are plain forms."""
    base = live_server.url
    recall_id = _recalls(admin_user)
    gone = Memory.objects.get(content=NOTES[3][0])
    services.memory_forget(memory_id=gone.memory_id, actor=admin_user, reason="stale")
    browser = console(390, debug).context.browser
    context = browser.new_context(java_script_enabled=False,
                                  viewport={"width": 390, "height": 900})
    page = context.new_page()
    login(page, base)
    page.goto(f"{base}/recalls/?interface=rest")
    assert page.locator("#recall-rows tr[data-recall-id]").count() == 1
    page.goto(f"{base}/recalls/{recall_id}/")
    page.select_option("#replay-profile select", "keyword")
    page.click("#replay-profile button[type=submit]")
    page.wait_for_url(re.compile(r".*profile=keyword.*"))
    assert page.locator("#column-replay li[data-memory-id]").count() == 3
    assert page.inner_text(f"#served-{gone.memory_id} .mark-forgotten") == "forgotten"
    assert page.inner_text(f"#served-{gone.memory_id} .move.dropped") == "gone"
    first = _served(page)[0]
    page.click(f"#served-{first} .grade-btn[value='2']")
    page.wait_for_url(re.compile(r".*profile=keyword.*"))
    assert "Graded" in page.inner_text("#messages")
    assert page.locator(f"#served-{first} .grade-btn[value='2'][aria-pressed='true']").count() == 1
    assert Judgment.objects.get().grade == 2
    assert page.evaluate(OVERFLOW)
    _shot(page, "nojs", debug, 390)
    context.close()
