"""Every console page under the Content-Security-Policy in headless Chromium: the browser
reports no violation (an inline script, an inline handler, eval) in its console, and the one
piece of script behaviour that used an inline handler (select every memory on the page)
still works from a static file.

Pages and their data are made through the API and the console, so the test holds wherever
the code lives.
"""

import json
import re
import shutil
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import ApiClient

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed"),
]

SHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"
VIOLATION = re.compile(r"Content Security Policy|Refused to (execute|apply|load|evaluate)",
                       re.IGNORECASE)


def _pages(admin_api: ApiClient) -> list[str]:
    """One URL of every kind of console page, with data behind it."""
    first = admin_api.post("/memories", {"user_id": "team-a", "content": "Tea at four",
                                         "tags": ["habit"]}).json()["memory_id"]
    admin_api.patch(f"/memories/{first}", {"content": "Tea at five"})
    admin_api.post("/memories", {"user_id": "team-a", "content": "Coffee at nine"})
    admin_api.post("/sessions", {"user_id": "team-a", "session_id": "s-1"})
    admin_api.post("/sessions/s-1/messages", {"role": "user", "content": "hello there"})
    admin_api.post("/profiles", {"name": "lab-one", "w_recency": 0.2, "w_relevance": 0.8})
    qs = admin_api.post("/query-sets", {"name": "qs", "user_id": "team-a",
                                        "queries": ["tea"]}).json()["id"]
    admin_api.post("/judgments", {"user_id": "team-a", "query": "tea", "memory_id": first,
                                  "grade": 3})
    run = admin_api.post("/runs", {"name": "r", "query_set": qs,
                                   "profiles": ["bm25", "lab-one"]})
    job = admin_api.post("/reindex", {"user_id": "team-a"}).json()["job_id"]
    pages = [
        "/", "/memories/", "/memories/?q=tea", f"/memories/{first}/",
        f"/memories/{first}/diff/?a=1&b=2", "/sessions/", "/sessions/s-1/",
        "/search/?user_id=team-a&q=tea", "/search/synonyms/",
        "/search/compare/?user_id=team-a&q=tea&a=bm25&b=lab-one", "/index/",
        f"/index/jobs/{job}/", "/index/policy/", "/index/backup/", "/activity/", "/tokens/",
        "/lab/", "/lab/profiles/", "/lab/profiles/lab-one/", "/lab/judgments/",
        "/lab/query-sets/", f"/lab/query-sets/{qs}/", "/lab/runs/",
    ]
    if run.status_code == 201:
        pages.append(f"/lab/runs/{run.json()['id']}/")
    return pages


@pytest.fixture
def chromium(live_server, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _logged_in_context(browser, live_server, user):
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": cookie.value,
                          "url": live_server.url}])
    return context


def test_no_console_page_breaks_the_content_security_policy(chromium, live_server, admin_user,
                                                            admin_api):
    pages = _pages(admin_api)
    context = _logged_in_context(chromium, live_server, admin_user)
    page = context.new_page()
    messages: list[tuple[str, str]] = []
    page.on("console", lambda msg: messages.append((page.url, msg.text)))
    page.on("pageerror", lambda exc: messages.append((page.url, str(exc))))
    headers = {}
    for path in pages:
        answer = page.goto(live_server.url + path, wait_until="networkidle")
        assert answer is not None and answer.status < 400, (path, answer and answer.status)
        headers[path] = answer.headers.get("content-security-policy", "")
    # Under the policy the pages still look as they should (a person looks at these).
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in (("index", "/index/"), ("memories", "/memories/"),
                           ("compare", "/search/compare/?user_id=team-a&q=tea&a=bm25&b=lab-one")):
            page.goto(live_server.url + path, wait_until="networkidle")
            page.screenshot(path=str(SHOTS / f"csp-{name}-{width}.png"), full_page=True)
    violations = [(url, text) for url, text in messages if VIOLATION.search(text)]
    assert violations == [], json.dumps(violations, indent=1)
    assert all(headers.values()), [p for p, h in headers.items() if not h]


def test_select_all_still_works_from_a_static_script(chromium, live_server, admin_user,
                                                     admin_api):
    for n in range(3):
        admin_api.post("/memories", {"user_id": "team-a", "content": f"note {n}"})
    context = _logged_in_context(chromium, live_server, admin_user)
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda msg: messages.append(msg.text))
    page.goto(live_server.url + "/memories/", wait_until="networkidle")
    page.click("#select-all")
    boxes = page.locator("input[name=memory_ids]")
    assert boxes.count() >= 3
    assert all(boxes.nth(i).is_checked() for i in range(boxes.count()))
    page.click("#select-all")
    assert not any(boxes.nth(i).is_checked() for i in range(boxes.count()))
    assert not [m for m in messages if VIOLATION.search(m)], messages
