"""The compare page in a real browser: headless Debian Chromium driven by Playwright's sync
API against pytest-django's live server (real database file, real Redis).

Moves B's importance slider and waits for the right column to re-rank (htmx, debounced),
grades a result with the keyboard, opens an explanation, and saves a screenshot to
``var/screenshots/compare.png`` for a person to look at.
"""

import datetime as dt
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from lab import query_sets as lab_query_sets
from lab import runs as lab_runs
from lab.models import Judgment
from memories import services
from memories.models import Memory
from tests import test_browser
from tests.browser import MODES, login
from tests.test_browser import CHROMIUM, SHOTS

# The browser, its launch flags and the screenshot folder are test_browser's.
browser_page = test_browser.browser_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
    ),
]

# (content, importance, age in days): the deploy notes rank differently once importance
# and recency weigh in.
NOTES = [
    (
        "Deploy checklist: deploy to staging, run the smoke tests, then deploy to production",
        0.15,
        40,
    ),
    ("The deploy key for the payments service lives in the team vault; rotate it monthly", 0.95, 3),
    ("A Friday deploy needs a second reviewer and a rollback plan", 0.8, 1),
    ("Old notes about the deploy script that was replaced in 2023", 0.05, 300),
    ("Ask Priya before changing the deploy pipeline; she owns the CI runners", 0.6, 12),
    ("Blue-green deploy switches traffic only after health checks pass", 0.4, 60),
    ("Lunch order for the team offsite: vegetarian options for six", 0.3, 2),
]


def column_b(page) -> list[str]:
    return page.eval_on_selector_all(
        "#column-b li[data-memory-id]", "els => els.map(e => e.dataset.memoryId)"
    )


def test_it_tunes_b_live_grades_and_explains(browser_page, live_server, admin_user):
    page, errors = browser_page
    now = dt.datetime.now(dt.UTC)
    for content, importance, days in NOTES:
        services.memory_create(
            user_id="team",
            content=content,
            importance=importance,
            created_at=now - dt.timedelta(days=days),
            actor=admin_user,
        )
    base = live_server.url
    login(page, base)

    page.goto(f"{base}/search/compare/?user_id=team&q=deploy&a=bm25&b=bm25&k=6")
    page.wait_for_function("() => window.htmx !== undefined")
    before = column_b(page)
    assert len(before) == 6 and page.locator("#tuned-b").count() == 0
    # A marker on window survives an htmx swap but not a full page load.
    page.evaluate("() => { window.__noReload = true; }")

    # One slider at a time: each move is one debounced request, swapped before the next.
    page.fill("#tune-w_rel", "0.3")
    page.wait_for_function("() => document.querySelector('#b-w-rel')?.textContent === '0.30'")
    page.fill("#tune-w_imp", "0.7")
    page.wait_for_function("() => document.querySelector('#b-w-imp')?.textContent === '0.70'")
    after = column_b(page)
    assert after != before and sorted(after) == sorted(before)
    assert after[0] != before[0]
    assert page.evaluate("() => window.__noReload") is True
    # The URL holds the new state (hx-push-url), so a reload shows the same comparison.
    query = parse_qs(urlsplit(page.url).query)
    assert query["w_imp"] == ["0.7"] and query["w_rel"] == ["0.3"] and query["b"] == ["bm25"]
    assert page.inner_text("#out-w_imp") == "0.7"
    assert page.locator("#column-b .move.up, #column-b .move.down").count() >= 2

    # Keyboard grading: focus B's first result, press 3; the same result's widget in the
    # other column is updated too (out-of-band swap).
    first = after[0]
    page.focus(f"#column-b li[data-memory-id='{first}']")
    page.keyboard.press("3")
    page.wait_for_selector(
        f"#column-b li[data-memory-id='{first}'] .grade-btn[value='3'][aria-pressed='true']"
    )
    page.wait_for_selector(
        f"#column-a li[data-memory-id='{first}'] .grade-btn[value='3'][aria-pressed='true']"
    )
    page.keyboard.press("ArrowDown")
    page.keyboard.press("1")
    page.wait_for_selector(
        f"#column-b li[data-memory-id='{after[1]}'] .grade-btn[value='1'][aria-pressed='true']"
    )
    grades = dict(Judgment.objects.values_list("memory_id", "grade"))
    assert grades == {first: 3, after[1]: 1}

    # Explain: opening the details loads the breakdown in place.
    page.click(f"#column-a li[data-memory-id='{before[0]}'] details.explain summary")
    page.wait_for_selector(f"#column-a li[data-memory-id='{before[0]}'] .xtable")
    cells = page.inner_text(f"#column-a li[data-memory-id='{before[0]}'] .xtable")
    assert "deploy" in cells and "idf" in cells

    page.screenshot(path=str(SHOTS / "compare.png"), full_page=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / "compare-top.png"))

    # A run over a query set: metric bars per profile and the results still to judge.
    queryset = lab_query_sets.queryset_create(
        actor=admin_user, name="deploys", user_id="team", queries=["deploy", "deploy key", "lunch"]
    )
    run = lab_runs.run_create(
        actor=admin_user,
        name="bm25 vs keyword",
        query_set=queryset,
        profiles=["bm25", "keyword"],
        k=5,
    )
    page.goto(f"{base}/lab/runs/{run.pk}/")
    assert page.locator("#metric-bars rect").count() == 8
    assert page.locator("#unjudged tbody tr").count() == len(run.unjudged)
    page.screenshot(path=str(SHOTS / "lab-run.png"), full_page=True)
    assert errors == [], errors


# Screenshots of the lab pages for a person to look at (outside the repository).
LAB_SHOTS = Path("/tmp/shots27")


def _notes(actor) -> None:
    now = dt.datetime.now(dt.UTC)
    for content, importance, days in NOTES:
        services.memory_create(user_id="team", content=content, importance=importance,
                               created_at=now - dt.timedelta(days=days), actor=actor)


def _focused(page) -> str | None:
    return page.evaluate("() => document.activeElement?.dataset?.memoryId || null")


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_both_sides_tune_and_the_keyboard_reaches_and_grades_results(console, live_server,
                                                                      admin_user, debug, width):
    _notes(admin_user)
    page = console(width, debug)
    page.goto(f"{live_server.url}/search/compare/?user_id=team&q=deploy&a=bm25&b=bm25&k=6")
    page.wait_for_function("() => window.htmx !== undefined")
    column_a = "#column-a li[data-memory-id]"
    before_a = page.eval_on_selector_all(column_a, "els => els.map(e => e.dataset.memoryId)")

    # Four keys from the top of the page: Skip to content, then Skip to the first result.
    for key in ("Tab", "Enter", "Tab", "Enter"):
        page.keyboard.press(key)
    assert page.evaluate("() => document.activeElement.id") == "first-result"
    assert _focused(page) == before_a[0]

    # A's sliders tune A, B's tune B; one request each, the URL holds both.
    page.fill("#tune-a_w_imp", "0.7")
    page.wait_for_function("() => document.querySelector('#a-w-imp')?.textContent === '0.70'")
    page.fill("#tune-w_rec", "0.4")
    page.wait_for_function("() => document.querySelector('#b-w-rec')?.textContent === '0.40'")
    after_a = page.eval_on_selector_all(column_a, "els => els.map(e => e.dataset.memoryId)")
    assert after_a != before_a and sorted(after_a) == sorted(before_a)
    query = parse_qs(urlsplit(page.url).query)
    assert query["a_w_imp"] == ["0.7"] and query["w_rec"] == ["0.4"]
    assert page.locator("#a-w-imp").inner_text() == "0.70"
    assert page.locator("#b-w-imp").inner_text() == "0.00"  # B keeps its own importance

    # j from nowhere focuses the first result; 3 grades it; j moves on; 1 grades the next.
    page.locator("h1").click()
    page.keyboard.press("j")
    assert _focused(page) == after_a[0]
    ring = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert ring == "solid"  # the focus is visible
    page.keyboard.press("3")
    page.wait_for_selector(f"{column_a}[data-memory-id='{after_a[0]}'] "
                           ".grade-btn[value='3'][aria-pressed='true']")
    page.keyboard.press("j")
    assert _focused(page) == after_a[1]
    page.keyboard.press("1")
    page.wait_for_selector(f"{column_a}[data-memory-id='{after_a[1]}'] "
                           ".grade-btn[value='1'][aria-pressed='true']")
    page.keyboard.press("k")
    assert _focused(page) == after_a[0]
    assert dict(Judgment.objects.values_list("memory_id", "grade")) == {after_a[0]: 3,
                                                                         after_a[1]: 1}
    assert page.locator("#kbd-help").is_visible()
    name = f"compare-{width}-{'debug' if debug else 'nodebug'}"
    page.screenshot(path=str(LAB_SHOTS / f"{name}-focus.png"))  # the focused card, in view
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(LAB_SHOTS / f"{name}.png"), full_page=True)
    assert page.errors == []


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_judgments_import_from_csv_export_and_show_agreement(console, live_server, admin_user,
                                                           tmp_path, debug, width):
    """An admin imports two raters' grades with one bad row: the bad row is named by line
    and column, the good ones are kept, the agreement shows with its pair count, and the
    export link downloads them as CSV."""
    _notes(admin_user)
    ids = [m for m in Memory.objects.filter(user_id="team").values_list("memory_id", flat=True)]
    lines = ["namespace,query,memory_id,grade,rater,updated_at"]
    for memory_id, a, b in zip(ids, (3, 0, 2), (3, 1, 2), strict=False):
        lines += [f"team,deploy,{memory_id},{a},ada,", f"team,deploy,{memory_id},{b},bo,"]
    lines.append(f"team,deploy,{ids[3]},7,ada,")  # line 8: a bad grade
    upload = tmp_path / "judgments.csv"
    upload.write_text("\n".join(lines) + "\n")
    page = console(width, debug)
    page.goto(f"{live_server.url}/lab/judgments/")
    page.set_input_files("#id_file", str(upload))
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#import-report")
    report = page.inner_text("#import-report")
    assert "Imported 6 new" in report and "line 8, grade" in report
    assert "over 3 (query, memory) pairs both graded" in page.inner_text("#agreement")
    assert Judgment.objects.count() == 6
    name = f"judgments-{width}-{'debug' if debug else 'nodebug'}"
    page.screenshot(path=str(LAB_SHOTS / f"{name}.png"), full_page=True)
    with page.expect_download() as download:
        page.click("#export-csv")
    exported = Path(download.value.path()).read_text().splitlines()
    assert exported[0] == "namespace,query,memory_id,grade,rater,updated_at"
    assert len(exported) == 7
    assert page.errors == []


# Screenshots of the four-profile compare page (outside the repository).
FOUR_SHOTS = Path("/tmp/lab-shots")


@pytest.mark.parametrize("debug", MODES)
@pytest.mark.parametrize("width", [1400, 390])
def test_a_query_sets_note_shows_and_four_profiles_compare_side_by_side(console, live_server,
                                                                        admin_user, debug,
                                                                        width):
    """The query set page edits a note in place (htmx); its compare link shows the note;
    "Add profile" twice makes four columns (side by side at 1400 px, stacked at 390 px,
    never wider than the screen); a C slider re-ranks C only; a grade given in D shows in
    every column holding that result, and D's live figures follow."""
    _notes(admin_user)
    FOUR_SHOTS.mkdir(parents=True, exist_ok=True)
    queryset = lab_query_sets.queryset_create(actor=admin_user, name="deploys", user_id="team",
                                              queries=["deploy", "lunch"])
    lab_query_sets.queryset_note_set(actor=admin_user, pk=queryset.pk, query="deploy",
                                     note="The payments deploy key: where it lives, who rotates")
    page = console(width, debug)
    mode = "debug" if debug else "nodebug"
    page.goto(f"{live_server.url}/lab/query-sets/{queryset.pk}/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert "who rotates" in page.inner_text("#note-text-1")
    # A note for "lunch", saved in place (no page load).
    page.evaluate("() => { window.__noReload = true; }")
    page.click("#note-2 summary")
    page.fill("#note-input-2", "Where the team eats at the offsite")
    page.click("#note-2 button[type=submit]:not([name])")
    page.wait_for_selector("#note-text-2")
    assert page.evaluate("() => window.__noReload") is True
    assert "offsite" in page.inner_text("#note-text-2")
    page.screenshot(path=str(FOUR_SHOTS / f"queryset-{width}-{mode}.png"), full_page=True)

    # Its compare link: the note of the query above the results.
    page.click("#queries tbody tr:first-child a[href*='/search/compare/']")
    page.wait_for_selector("#query-note")
    assert "who rotates" in page.inner_text("#query-note")
    assert "query 1 of 2" in page.inner_text("#query-set-nav")

    # Two more profiles: C, then D (plain submits of the tune form).
    page.click("#add-profile")
    page.wait_for_selector("#column-c")
    page.click("#add-profile")
    page.wait_for_selector("#column-d")
    assert page.locator("#add-profile").count() == 0
    query = parse_qs(urlsplit(page.url).query)
    assert {"c", "d", "query_set"} <= set(query)
    assert "who rotates" in page.inner_text("#query-note")  # the set travels along

    # C's importance slider re-ranks C (htmx), D keeps its own settings.
    page.wait_for_function("() => window.htmx !== undefined")
    page.evaluate("() => { window.__noReload = true; }")
    page.fill("#tune-c_w_imp", "0.9")
    page.wait_for_function("() => document.querySelector('#c-w-imp')?.textContent === '0.90'")
    assert page.evaluate("() => window.__noReload") is True
    assert parse_qs(urlsplit(page.url).query)["c_w_imp"] == ["0.9"]
    d_imp = page.inner_text("#d-w-imp")
    page.reload()  # the heads mark a tuned side once the page loads again
    assert page.locator("#tuned-c").count() == 1 and page.locator("#tuned-d").count() == 0
    assert page.inner_text("#d-w-imp") == d_imp and page.inner_text("#c-w-imp") == "0.90"

    # A grade given in D: every copy of that result shows it; D's figures count it.
    first_d = page.eval_on_selector("#column-d li[data-memory-id]", "e => e.dataset.memoryId")
    page.focus(f"#column-d li[data-memory-id='{first_d}']")
    page.keyboard.press("2")
    for side in "abcd":
        if page.locator(f"#column-{side} li[data-memory-id='{first_d}']").count():
            page.wait_for_selector(f"#column-{side} li[data-memory-id='{first_d}'] "
                                   ".grade-btn[value='2'][aria-pressed='true']")
    page.wait_for_function(
        "() => /1 of the top/.test(document.querySelector('#live-metrics-d').textContent)")
    assert dict(Judgment.objects.values_list("memory_id", "grade")) == {first_d: 2}

    # The layout: four columns side by side at 1400 px, stacked at 390 px; never wider.
    boxes = [page.locator(f"#column-{s}").bounding_box() for s in "abcd"]
    if width == 1400:
        assert len({round(b["y"]) for b in boxes}) == 1
        assert [b["x"] for b in boxes] == sorted(b["x"] for b in boxes)
    else:
        assert len({round(b["x"]) for b in boxes}) == 1
        assert [b["y"] for b in boxes] == sorted(b["y"] for b in boxes)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(FOUR_SHOTS / f"compare-four-{width}-{mode}.png"), full_page=True)
    # In view, one screen each: the set's note, the heads (C's at 390 px), the columns.
    for name, selector in (("note", "#query-set-nav"), ("heads", ".side-c-head"),
                           ("columns", "#column-a"), ("column-d", "#column-d")):
        page.evaluate(f"() => document.querySelector('{selector}').scrollIntoView()")
        page.screenshot(path=str(FOUR_SHOTS / f"compare-four-{width}-{mode}-{name}.png"))

    # Remove B: C and D move up a letter; three columns remain.
    page.click("#remove-b")
    page.wait_for_selector("#column-c")
    assert page.locator("#column-d").count() == 0 and page.locator("#add-profile").count() == 1
    assert page.errors == []
