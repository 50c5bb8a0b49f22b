"""The console at phone width (390 px) and desktop width (1400 px): no page is wider than the
window, the navigation wraps, a skip link leads to the content, and the edit form works in a
real browser (issue 14). Screenshots go to ``var/screenshots/phone-*`` / ``desk-*``."""

import datetime as dt
from urllib.parse import urlencode

import pytest

from memories import services
from sessions.services import session_append, session_create
from tests.browser import login
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
        "tokens": "/tokens/", "lab": "/lab/", "recalls": "/recalls/", "usage": "/usage/",
        "query-sets": "/lab/query-sets/",
        "compare": "/search/compare/?user_id=team-harbor&q=release",
    }, m


# Visible inputs whose placeholder is wider than the room for text (a number input also
# shows its arrows): "default 25" cut to "default 2" reads as a value.
CLIPPED_PLACEHOLDERS = """() => {
  const pen = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('input[placeholder]')]
    .filter(i => i.offsetParent !== null)
    .filter(i => {
      const s = getComputedStyle(i);
      pen.font = s.font;
      const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)
        - (i.type === 'number' ? 20 : 0);
      return pen.measureText(i.placeholder).width > room;
    })
    .map(i => `${i.name}: ${i.placeholder}`);
}"""


def _login(page, base):
    login(page, base)


@pytest.mark.parametrize("width", [390, 1400])
def test_no_main_page_is_wider_than_the_window(live_server, monkeypatch, pages, width):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    urls, _ = pages
    wide, clipped = [], []
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
            clipped += [(name, p) for p in page.evaluate(CLIPPED_PLACEHOLDERS)]
        browser.close()
    assert not wide, f"pages wider than {width} px: {wide}"
    assert not clipped, f"placeholders cut off at {width} px: {clipped}"


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
# a data-label the CSS renders before it. Exempt: a cell spanning the whole row (a message),
# a cell under an empty header (a row's own button or checkbox) and a row header (a <th>
# naming its row, as the diff's field names). A table that keeps its header row (a numeric
# grid, class keep-header) needs no labels: it must scroll inside its card instead.
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
        if (td.tagName === 'TD' && shown && span < heads.length && heads[col] !== ''
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
# What a page's tables are at this width: [stacked (header hidden), keeps its header], and
# the cells that show a label although the header row is there (desktop must not).
TABLES = """() => {
  const out = {stacked: 0, grid: 0, labelled_with_header: 0};
  for (const table of document.querySelectorAll('table')) {
    if (table.getBoundingClientRect().height === 0) continue;
    const head = table.querySelector('thead tr');
    const headed = head && head.getBoundingClientRect().height > 0;
    out[headed ? 'grid' : 'stacked'] += 1;
    if (headed) {
      for (const td of table.querySelectorAll('td')) {
        const label = getComputedStyle(td, '::before').content;
        if (label !== 'none' && label !== 'normal') out.labelled_with_header += 1;
      }
    }
  }
  return out;
}"""


@pytest.fixture
def demo_pages(admin_user, editor, settings):
    """Every console page that shows a table, with rows in it: the demo's data (sessions,
    runs, judgments, query set, profiles) plus a memory with three versions, a webhook with
    a pending and a failed delivery, an API token and a forgetting-policy run."""
    from django.core.management import call_command

    from accounts.tokens import token_create
    from integrations.webhooks import outbox
    from integrations.webhooks.endpoints import endpoint_create
    from lab.models import EvalRun, QuerySet
    from operations import policy
    from search.memory_search import memory_search

    call_command("load_demo")
    first, second = EvalRun.objects.order_by("pk")[:2]
    m, _ = services.memory_create(user_id="team-harbor", content=LONG, tags=["release"],
                                  metadata={"ticket": "HARBOR-1234567890-release-checklist"})
    services.memory_update(memory_id=m.memory_id, actor=admin_user, reason="typo",
                           content=LONG.replace("noon", "12:00"), importance=0.9)
    services.memory_update(memory_id=m.memory_id, actor=editor, reason="tags",
                           tags=["release", "ops", "checklist"])
    settings.WEBHOOKS_ALLOW_PRIVATE = True  # a loopback receiver, as the webhook tests use
    endpoint = endpoint_create(actor=admin_user, url="http://127.0.0.1:9/hooks/memory-console",
                               events=["memory.created", "memory.updated"],
                               namespaces=["team-harbor", "agent-support"],
                               description="Support desk sync")
    outbox.outbox_test_event(endpoint, actor=admin_user)
    failed = outbox.outbox_test_event(endpoint, actor=admin_user).deliveries.get()
    outbox.delivery_record(delivery_id=failed.pk, ok=False, status_code=502, final=True,
                           error="Bad Gateway from the receiver's proxy", retry_in=None)
    token_create(user=editor, name="support agent", namespaces=["agent-support"])
    old = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    for n in range(2):  # idle and unimportant: the policy forgets them
        services.memory_create(user_id="team-policy", content=f"an idle trivial note {n}",
                               importance=0.1, created_at=old)
    policy.cleanup_apply(policy.cleanup_plan(user_id="team-policy"), actor=admin_user)
    for n in range(2):  # and the next plan has rows to show again
        services.memory_create(user_id="team-policy", content=f"another idle note {n}",
                               importance=0.1, created_at=old)
    services.memory_create(user_id="team-policy", content="the quarterly budget review",
                           importance=0.8, created_at=old)
    query = "refund approval"  # the demo's lab example: a query of its set, a tuned profile
    hit = memory_search(user_id="agent-support", query=query).results[0]
    explain = urlencode({"user_id": "agent-support", "q": query, "a": "bm25",
                         "b": "support-tuned", "side": "a", "memory_id": hit.memory_id})
    qs = QuerySet.objects.get(name="support questions (demo)")
    return {
        "overview": "/", "memories": "/memories/", "history": f"/memories/{m.memory_id}/",
        "diff": f"/memories/{m.memory_id}/diff/?a=1&b=3",
        "search": "/search/?user_id=agent-support&q=refund+approval",
        "sessions": "/sessions/", "index": "/index/", "activity": "/activity/",
        "policy": "/index/policy/?user_id=team-policy", "tokens": "/tokens/",
        "users": "/users/", "webhooks": "/integrations/webhooks/",
        "webhook": f"/integrations/webhooks/{endpoint.pk}/",
        "lab": "/lab/", "profiles": "/lab/profiles/",
        "profile": "/lab/profiles/support-tuned/",
        "querysets": "/lab/query-sets/", "queryset": f"/lab/query-sets/{qs.pk}/",
        "runs": "/lab/runs/", "run": f"/lab/runs/{first.pk}/",
        "compare-runs": f"/lab/runs/compare/?a={first.pk}&b={second.pk}",
        "judgments": "/lab/judgments/", "explain": f"/search/compare/explain/?{explain}",
    }


def _walk(live_server, urls: dict, tag: str) -> dict:
    """Each page at 390 then 1400 px: what failed to load, the pages without a table, the
    phone pages wider than the window, the unlabelled stacked cells, the desktop tables
    that show card labels, and how many stacked tables the phone saw. Screenshots of each
    table's first rows go to ``var/screenshots/table{tag}-<page>-<n>-<width>.png``."""
    sync_api = pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen = {"failed": {}, "tableless": [], "wide": {}, "unlabelled": {}, "desk_labels": {},
            "stacked": 0}
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 860})
        _login(page, live_server.url)
        for width in (390, 1400):
            page.set_viewport_size({"width": width, "height": 860})
            for name, url in urls.items():
                response = page.goto(live_server.url + url)
                if not response.ok:
                    seen["failed"][f"{name}@{width}"] = response.status
                    continue
                for n, table in enumerate(page.locator("table").all()):
                    box = table.bounding_box()  # the table's first rows, not a page of rows
                    if box:
                        page.screenshot(path=str(SHOTS / f"table{tag}-{name}-{n}-{width}.png"),
                                        full_page=True, clip={"x": 0, "y": box["y"],
                                                              "width": width, "height": 640})
                tables = page.evaluate(TABLES)
                if tables["stacked"] + tables["grid"] == 0:
                    seen["tableless"].append(f"{name}@{width}")
                if width < 500:
                    seen["stacked"] += tables["stacked"]
                    if not page.evaluate(OVERFLOW):
                        seen["wide"][name] = page.evaluate("document.documentElement.scrollWidth")
                elif tables["stacked"] or tables["labelled_with_header"]:
                    seen["desk_labels"][name] = tables  # desktop: header rows, no card labels
                if bad := page.evaluate(UNLABELLED_CELLS):
                    seen["unlabelled"][f"{name}@{width}"] = bad
        browser.close()
    return seen


@pytest.mark.usefixtures("empty_queues")
@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_every_stacked_table_cell_keeps_its_label(live_server, monkeypatch, settings,
                                                  demo_pages, debug):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.DEBUG = debug  # the live server reads the same settings
    seen = _walk(live_server, demo_pages, "")
    assert seen["failed"] == {} and seen["tableless"] == []
    assert seen["wide"] == {}, f"pages wider than 390 px: {seen['wide']}"
    assert seen["unlabelled"] == {}
    assert seen["desk_labels"] == {}
    assert seen["stacked"] >= len(demo_pages)  # most pages stack at least one table


# The list pages of a console with (almost) nothing in it yet: an empty table is one message
# row or no table at all.
EMPTY_PAGES = {
    "overview": "/", "memories": "/memories/", "sessions": "/sessions/", "index": "/index/",
    "activity": "/activity/", "tokens": "/tokens/", "users": "/users/",
    "webhooks": "/integrations/webhooks/", "lab": "/lab/", "profiles": "/lab/profiles/",
    "runs": "/lab/runs/", "judgments": "/lab/judgments/", "querysets": "/lab/query-sets/",
    "policy": "/index/policy/?user_id=team-harbor",
}


@pytest.mark.usefixtures("empty_queues")
@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_empty_tables_fit_a_phone(live_server, monkeypatch, settings, admin_user, debug):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.DEBUG = debug
    # The Policy page needs a namespace that exists: one fresh memory, nothing to plan.
    services.memory_create(user_id="team-harbor", content="a fresh and unrelated fact")
    seen = _walk(live_server, EMPTY_PAGES, "-empty")
    assert seen["failed"] == {}
    assert seen["wide"] == {}, f"pages wider than 390 px: {seen['wide']}"
    assert seen["unlabelled"] == {} and seen["desk_labels"] == {}
