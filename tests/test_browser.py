"""The console in a real browser: headless Debian Chromium driven by Playwright's sync API
against pytest-django's live server (real database file, real Redis).

Screenshots go to ``var/screenshots/`` for a person to look at.
"""

import shutil
from urllib.parse import parse_qs, urlsplit

import pytest

from memories import access, services
from memories.models import Memory
from sessions.services import session_append, session_create
from tests.browser import ARGS, CHROMIUM, SHOTS, login  # noqa: F401  (ARGS: test_browser_phone)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
    ),
]


@pytest.fixture
def browser_page(chromium, live_server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport={"width": 1360, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page, errors
    page.context.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_it_edits_importance_inline_and_searches(browser_page, live_server, admin_user):
    page, errors = browser_page
    memory, _ = services.memory_create(
        user_id="alice",
        content="🌱plants need water every 3 days🚿",
        importance=0.5,
        tags=["garden", "routine"],
        metadata={"source_doc": "care-sheet.md"},
        actor=admin_user,
    )
    for n, text in enumerate(
        [
            "Team lunch is at Cafe Lumen on Fridays",
            "The deploy key rotates on the first Monday of each month",
            "Alice prefers tea over coffee in the afternoon",
            "Water the office ferns on Mondays",
        ]
    ):
        services.memory_create(
            user_id="alice" if n % 2 else "bob",
            content=text,
            conversation_id="c-1" if n == 1 else None,
            actor=admin_user,
        )
    session_create(user_id="alice", session_id="s-demo", agent_id="helper")
    session_append(
        session_id="s-demo",
        messages=[
            {"role": "user", "content": "When should I water the plants?"},
            {"role": "assistant", "content": "Every 3 days, according to your care sheet."},
        ],
    )
    base = live_server.url

    page.goto(f"{base}/memories/")
    assert "/accounts/login/" in page.url
    shot(page, "01-login")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-ada")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/memories/")
    shot(page, "03-memories")

    page.goto(f"{base}/")
    assert page.inner_text("#stat-live") == "5"
    shot(page, "02-overview")

    # Two recalls hit it: the page folds the hits counted in Redis before it shows them.
    access.access_record(user_id="alice", memory_ids=[memory.memory_id])
    access.access_record(user_id="alice", memory_ids=[memory.memory_id])
    page.goto(f"{base}/memories/{memory.memory_id}/")
    page.wait_for_function("() => window.htmx !== undefined")
    assert page.inner_text("#importance-value") == "0.50"
    assert "Accessed\n2 times" in page.inner_text("body")
    # A marker on window survives an htmx swap but not a full page load.
    page.evaluate("() => { window.__noReload = true; }")
    page.fill("#importance_importance", "0.85")
    page.fill("#importance_reason", "checked in the browser")
    page.click("#importance-form button[type=submit]")
    page.wait_for_selector("#version-2")
    assert page.inner_text("#importance-value") == "0.85"
    assert page.get_attribute("#version-2", "data-kind") == "importance"
    assert "checked in the browser" in page.inner_text("#version-2")
    assert "Importance set to 0.85" in page.inner_text("#messages")
    assert page.evaluate("() => window.__noReload") is True
    assert page.inner_text("#memory-content") == "🌱plants need water every 3 days🚿"
    shot(page, "04-detail-after-edit")
    stored = Memory.objects.get(pk=memory.memory_id)
    assert (stored.importance, stored.version) == (0.85, 2)

    # Forget through the hx-confirm dialog: the panel swaps, the version row is struck through.
    page.on("dialog", lambda dialog: dialog.accept())
    page.fill("#state_reason", "testing forget")
    page.click("#state-form button[type=submit]")
    page.wait_for_selector("#version-3.forgotten")
    assert page.inner_text("#state-badge") == "forgotten"
    assert "line-through" in page.eval_on_selector(
        "#version-3 td.strike", "el => getComputedStyle(el).textDecorationLine"
    )
    shot(page, "04b-detail-forgotten")
    page.click("#state-form button[type=submit]")  # Restore
    page.wait_for_selector("#version-4[data-kind=restore]")

    # htmx pagination keeps the filters and pushes the page URL.
    services.memory_create_many(
        items=[{"user_id": "bob", "content": f"bob's note number {n}"} for n in range(23)],
        actor=admin_user,
    )
    services.memory_forget(
        memory_id=Memory.objects.filter(user_id="bob").first().memory_id,
        actor=admin_user,
        reason="stale",
    )
    page.goto(f"{base}/memories/?q=note&per_page=10")
    first = page.locator("#memory-rows tr[data-memory-id]").first.get_attribute("data-memory-id")
    page.click("#memory-rows nav.pagination a[rel=next]")
    page.wait_for_url("**page=2**")
    assert parse_qs(urlsplit(page.url).query) == {"q": ["note"], "per_page": ["10"], "page": ["2"]}
    page.wait_for_function(
        f"() => document.querySelector('#memory-rows tr[data-memory-id]')"
        f".dataset.memoryId !== '{first}'"
    )
    assert page.locator("#memory-rows tr[data-memory-id]").count() == 10
    page.goto(f"{base}/memories/?user_id=bob&per_page=10")
    shot(page, "03b-memories-paged")

    page.goto(f"{base}/search/")
    page.fill("#id_user_id", "alice")
    page.fill("#id_q", "plants water")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector(f"#results tr[data-memory-id='{memory.memory_id}']")
    # hx-push-url kept the query in the address bar (shareable, back button works).
    assert parse_qs(urlsplit(page.url).query)["q"] == ["plants water"]
    assert page.locator("#results tr[data-memory-id]").count() >= 1
    shot(page, "05-search")

    # The htmx-config meta swaps 400 answers (form errors) instead of dropping them.
    page.evaluate(
        "() => htmx.ajax('GET', '/search/?q=plants', {target: '#results', swap: 'outerHTML'})"
    )
    page.wait_for_selector("#results .alert-error")
    assert "This field is required" in page.inner_text("#results")
    errors.clear()  # the browser logs that deliberate 400; nothing else may fail

    page.fill("#id_user_id", "nobody-here")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#no-results")
    shot(page, "06-search-empty")

    page.goto(f"{base}/sessions/s-demo/")
    assert "Every 3 days" in page.inner_text("#transcript")
    shot(page, "07-session")

    assert errors == [], errors


def test_a_viewer_sees_a_read_only_page(browser_page, live_server, viewer):
    page, errors = browser_page
    memory, _ = services.memory_create(user_id="alice", content="read only please")
    login(page, live_server.url, "vera")
    page.goto(f"{live_server.url}/memories/{memory.memory_id}/")
    assert page.locator("#importance-form").count() == 0
    assert "needs the editor role" in page.inner_text("#memory-actions")
    shot(page, "08-detail-viewer")
    assert errors == [], errors
