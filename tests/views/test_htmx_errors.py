"""Every htmx request a console page makes answers a 4xx with a fragment for its own target
(an inline error), never a whole page swapped into a box (issue 14).

The test WALKS the pages: it renders each main page as an admin, collects every element with
hx-get / hx-post / hx-delete and its effective hx-target (inherited from ancestors as htmx
does), sends each a bad request as htmx would, and checks every 4xx answer."""

import re
from html.parser import HTMLParser

import pytest

from console.pages import FRAGMENT_HEADER
from memories import services
from sessions import services as session_services
from tests.views.conftest import ids

pytestmark = pytest.mark.django_db

VOID = {"input", "br", "img", "meta", "link", "hr", "source", "col", "area", "base", "wbr"}
VERBS = ("hx-get", "hx-post", "hx-delete")
# Values no form accepts: a bad page number, an id with spaces, a far too long text.
BAD_GET = {"page": "zzz", "per_page": "-5", "user_id": "no such id!", "namespace": "bad ns!",
           "a": "999", "b": "0", "q": "x" * 600, "k": "-1", "profile": "no such profile!"}
# How a fragment shows an error: an alert (a refusal, "no longer exists", a form's errors) or
# a field's own error line.
ERROR_SHOWN = re.compile(r'class="[^"]*\b(alert-error|field-error)\b')


class _Requests(HTMLParser):
    """``[(verb, url, target, swap)]`` for every element making an htmx request."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[dict] = []
        self.found: list[tuple[str, str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        target = a.get("hx-target") or next(
            (s["hx-target"] for s in reversed(self.stack) if s.get("hx-target")), "this")
        swap = a.get("hx-swap") or next(
            (s["hx-swap"] for s in reversed(self.stack) if s.get("hx-swap")), "innerHTML")
        for verb in VERBS:
            if a.get(verb):
                self.found.append((verb[3:], a[verb], target, swap.split()[0]))
        if tag not in VOID:
            self.stack.append(a)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()


def htmx_requests(html: str):
    parser = _Requests()
    parser.feed(html)
    return parser.found


class _FoldedErrors(HTMLParser):
    """``folded``: how many errors sit inside a closed ``<details>``, where nobody sees them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: a closed <details>?
        self.folded = 0

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if ERROR_SHOWN.search(f'class="{a.get("class", "")}"') and any(self.stack):
            self.folded += 1
        if tag not in VOID:
            self.stack.append(tag == "details" and "open" not in a)

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()


def folded_errors(html: str) -> int:
    parser = _FoldedErrors()
    parser.feed(html)
    return parser.folded


@pytest.fixture
def pages(admin_user, make_memory):
    m = make_memory("The staging database is db-stage-2", tags=["ops"])
    services.memory_update(memory_id=m.memory_id, actor=admin_user,
                           content="The staging database is db-stage-3", reason="moved")
    session_services.session_create(user_id="u-a", session_id="s-walk")
    session_services.session_append(session_id="s-walk", messages=[
        {"role": "user", "content": "remember the staging database is db-stage-3"}])
    return ["/", "/memories/", f"/memories/{m.memory_id}/", "/sessions/", "/sessions/s-walk/",
            "/search/?q=staging&user_id=u-a", "/search/synonyms/", "/index/", "/index/policy/",
            "/index/backup/", "/activity/", "/tokens/", "/search/compare/?q=staging&user_id=u-a",
            "/lab/", "/lab/profiles/", "/lab/judgments/", "/lab/query-sets/", "/lab/runs/",
            "/integrations/webhooks/"]


def _fragment_for(resp, target: str, swap: str) -> str | None:
    """None when the answer is an inline fragment for ``target``, else what is wrong: never
    a whole page; marked as made for its target (else django-htmx's debug error handler,
    DEBUG on, shows it as the whole page); showing an error (else the box empties and
    nothing says why), not folded away in a closed ``<details>``; an ``outerHTML`` swap
    must bring the target's element back (else the next request from the page has nowhere
    to go)."""
    body = resp.content.decode()
    if "<html" in body or "<body" in body:
        return "a whole page"
    if resp.headers.get(FRAGMENT_HEADER) != "1":
        return f"no {FRAGMENT_HEADER} header"
    if not ERROR_SHOWN.search(body):
        return "no error shown"
    if folded_errors(body):
        return "an error inside a closed <details>"
    retarget = resp.headers.get("HX-Retarget")
    if retarget:
        return None  # the server names the box it fills (the messages area)
    if swap != "outerHTML":
        return None  # the fragment goes inside the target, which stays
    if target.startswith("#"):
        return None if target[1:] in ids(body) else f"no element {target}"
    if target.startswith("closest ."):
        cls = target.split(".", 1)[1]
        return None if cls in body else f"no .{cls}"
    return None


def test_every_htmx_request_answers_a_4xx_with_a_fragment_for_its_target(admin_role_client,
                                                                         pages):
    seen, checked, wrong = set(), [], []
    for page in pages:
        resp = admin_role_client.get(page)
        assert resp.status_code == 200, page
        for verb, url, target, swap in htmx_requests(resp.content.decode()):
            path = url.split("?", 1)[0]
            if (verb, path, target) in seen or not path.startswith("/"):
                continue
            seen.add((verb, path, target))
            headers = {"HX-Request": "true", "HX-Current-URL": page,
                       "HX-Target": target.lstrip("#")}
            if verb == "get":
                answer = admin_role_client.get(path, BAD_GET, headers=headers)
            elif verb == "post":
                answer = admin_role_client.post(path, {}, headers=headers)
            else:
                answer = admin_role_client.delete(path, headers=headers)
            if 400 <= answer.status_code < 500:
                checked.append((verb, path, answer.status_code))
                problem = _fragment_for(answer, target, swap)
                if problem:
                    wrong.append(f"{verb.upper()} {path} → {answer.status_code}: {problem} "
                                 f"(target {target}, from {page})")
    assert not wrong, "\n".join(wrong)
    # The walk reached the forms (a walk that checked nothing would prove nothing).
    assert len(seen) >= 20 and len(checked) >= 10, (len(seen), checked)


def test_a_bulk_action_with_nothing_selected_is_an_inline_error(editor_client, make_memory):
    make_memory("The staging database is db-stage-2")
    resp = editor_client.post("/memories/bulk/", {"action": "forget", "back": ""},
                              headers={"HX-Request": "true", "HX-Target": "memory-rows"})
    body = resp.content.decode()
    assert resp.status_code == 400 and "<html" not in body
    assert "memory-rows" in ids(body) and "Select at least one memory." in body
