"""The console's second-pass pages in headless Chromium, at 1400 and 390 px: the compare
page's live nDCG@k / P@k while grading, the run comparison's same-profile deltas, the Tokens
page (a new user, namespaces, the copy button), the own 404 page with DEBUG on, namespace
suggestions and "no such namespace", synonyms with comments, the profile table with every
setting, the Policy page's cached dry run, and a merged memory's sources for a viewer.
Screenshots go to ``var/screenshots/pass2-*.png`` for a person to look at."""

import datetime as dt

import pytest

from lab import judgments as lab_judgments
from lab import query_sets as lab_query_sets
from lab import runs as lab_runs
from memories import services
from operations import consolidate
from search import profile_services
from search.synonym_sets import synonyms_replace
from tests.browser import login
from tests.test_browser import ARGS, CHROMIUM, SHOTS, pytestmark  # noqa: F401  (the markers)

pytestmark = [*pytestmark, pytest.mark.django_db(transaction=True)]  # noqa: F811

OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"
OLD = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)
NOTES = [
    ("Deploy checklist: deploy to staging, run the smoke tests, then deploy to production", 0.15),
    ("The deploy key for the payments service lives in the team vault; rotate it monthly", 0.95),
    ("A Friday deploy needs a second reviewer and a rollback plan", 0.8),
    ("Old notes about the deploy script that was replaced in 2023", 0.05),
    ("Harbor v2.6.0 ships on Thursday. Replies come from no-reply@mail.harbor.example.", 0.6),
    ("Harbor v2.6.0 ships on Thursday.", 0.6),
]


@pytest.fixture
def world(admin_user, editor, viewer):
    ids = [
        services.memory_create(
            user_id="team-harbor", content=c, importance=i, created_at=OLD, actor=admin_user
        )[0].memory_id
        for c, i in NOTES
    ]
    profile_services.profile_create(
        actor=editor,
        name="tuned",
        ranker="bm25",
        stemming=True,
        context=True,
        w_relevance=0.6,
        w_importance=0.4,
        temporal="boost",
        w_time=0.3,
    )
    qs = lab_query_sets.queryset_create(
        actor=editor,
        name="deploys",
        user_id="team-harbor",
        queries=["deploy key", "friday deploy", "deploy"],
    )
    for query, memory_id, grade in [
        ("deploy key", ids[1], 3),
        ("friday deploy", ids[2], 3),
        ("deploy", ids[0], 2),
        ("deploy", ids[3], 0),
    ]:
        lab_judgments.judgment_set(
            actor=editor, user_id="team-harbor", query=query, memory_id=memory_id, grade=grade
        )
    a = lab_runs.run_create(
        actor=editor, name="before", query_set=qs, profiles=["bm25", "tuned"], k=5
    )
    profile_services.profile_update(
        actor=editor, name="tuned", w_relevance=1.0, w_importance=0.0, reason="back to relevance"
    )
    b = lab_runs.run_create(
        actor=editor, name="after", query_set=qs, profiles=["bm25", "tuned"], k=5
    )
    synonyms_replace(text="# vehicles\ncar, automobile\n", actor="seed")
    return {"ids": ids, "runs": (a.pk, b.pk)}


def _login(page, base, who=("ada", "pw-ada")):
    login(page, base, *who)


@pytest.fixture
def browser(live_server, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)

        def open_page(width: int, who=("ada", "pw-ada")):
            context = chromium.new_context(viewport={"width": width, "height": 900})
            context.grant_permissions(["clipboard-read", "clipboard-write"])
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            _login(page, live_server.url, who)
            return page, errors

        yield open_page
        chromium.close()


def shot(page, name: str, width: int) -> None:
    page.screenshot(path=str(SHOTS / f"pass2-{name}-{width}.png"), full_page=True)
    assert page.evaluate(OVERFLOW), f"{name} is wider than {width} px"


@pytest.mark.parametrize("width", [1400, 390])
def test_live_metrics_while_grading_and_run_deltas(browser, live_server, world, width):
    page, errors = browser(width)
    base = live_server.url
    page.goto(f"{base}/search/compare/?user_id=team-harbor&q=deploy+key&a=bm25&b=tuned&k=5")
    page.wait_for_function("() => window.htmx !== undefined")
    page.evaluate("() => { window.__noReload = true; }")
    assert "nDCG@5" in page.inner_text("#live-metrics-a")
    before = page.inner_text("#live-metrics-b")
    # Grade B's second result 3: both columns' figures change in place, without a reload.
    second = page.eval_on_selector_all(
        "#column-b li[data-memory-id]", "els => els.map(e => e.dataset.memoryId)"
    )[1]
    page.click(f"#column-b li[data-memory-id='{second}'] .grade-btn[value='3']")
    page.wait_for_function(
        "(b) => document.querySelector('#live-metrics-b').innerText !== b", arg=before
    )
    assert page.evaluate("() => window.__noReload") is True
    assert "P@5" in page.inner_text("#live-metrics-a")
    shot(page, "compare-live", width)

    a, b = world["runs"]
    page.goto(f"{base}/lab/runs/compare/?a={a}&b={b}")
    heads = page.text_content("#compare-queries thead")
    assert "Δ bm25" in heads and "Δ tuned" in heads
    shot(page, "run-compare", width)
    page.goto(f"{base}/lab/profiles/")
    assert "neighbouring turns (context field)" in page.inner_text("#profiles")
    shot(page, "profiles", width)
    assert errors == [], errors


@pytest.mark.parametrize("width", [1400, 390])
def test_tokens_namespaces_synonyms_and_not_found(browser, live_server, world, settings, width):
    page, errors = browser(width)
    base = live_server.url
    page.goto(f"{base}/tokens/")
    assert page.locator("datalist#namespaces option[value='team-harbor']").count() == 1
    page.fill("#token_username", "vera")
    page.select_option("#token_role", "editor")
    page.click("#token-form button[type=submit]")
    assert "vera is viewer" in page.inner_text("#token-form")  # never silently
    shot(page, "token-role-confirm", width)
    page.fill("#token_username", f"agent-{width}")
    page.select_option("#token_role", "editor")
    page.fill("#token_namespaces", "team-harbor")
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#token-created")
    page.click("#copy-token")
    page.wait_for_function("() => document.querySelector('#copy-status').textContent !== ''")
    token = page.input_value("#new-token")
    assert token.startswith("mc_")
    assert page.evaluate("() => navigator.clipboard.readText()") == token
    assert "Restricted to team-harbor" in page.inner_text("#token-namespaces")
    shot(page, "token-created", width)

    page.goto(f"{base}/index/policy/?user_id=team-harbour")
    assert "No such namespace" in page.inner_text("main")
    shot(page, "policy-no-such-namespace", width)
    page.goto(f"{base}/index/policy/?user_id=team-harbor")
    page.wait_for_selector("#dry-run-state")
    assert "Dry run computed" in page.inner_text("#dry-run-state")
    assert page.locator("[data-group-id]").count() == 1
    shot(page, "policy-cached", width)

    page.goto(f"{base}/search/synonyms/")
    text = page.input_value("textarea")
    page.fill("textarea", text + "\n# furniture\nsofa, couch\n")
    page.click("#synonyms-form button[type=submit]")
    page.wait_for_selector("#messages :text('Saved 2 synonym sets and 2 comment lines')")
    assert "# furniture" in page.input_value("textarea")
    shot(page, "synonyms-saved", width)

    settings.DEBUG = True  # the live server reads the same settings
    page.goto(f"{base}/sessions/no-such-session/")
    assert "This session does not exist" in page.inner_text("#not-found")
    shot(page, "not-found-debug", width)
    page.goto(f"{base}/index/jobs/no-such-job/")
    assert "This job does not exist" in page.inner_text("#not-found")
    settings.DEBUG = False
    # Only the statuses the steps asked for (409 role confirmation, 400 no such namespace,
    # 404 unknown session and job): no script error.
    assert [e for e in errors if "Failed to load resource" not in e] == [], errors


def test_a_viewer_sees_what_a_memory_was_merged_from(browser, live_server, world):
    group = consolidate.consolidation_plan(user_id="team-harbor").groups[0]
    merged = consolidate.consolidate_group(memory_ids=group.memory_ids, reason="dup")
    for width in (1400, 390):
        page, errors = browser(width, ("vera", "pw-vera"))
        page.goto(f"{live_server.url}/memories/{merged.memory_id}/")
        box = page.inner_text("#consolidation ~ p")
        assert "Merged from 2 memories" in box and group.memory_ids[0] in box
        assert page.locator("#undo-consolidation-form").count() == 0
        shot(page, "merged-viewer", width)
        assert errors == [], errors
