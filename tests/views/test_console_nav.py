"""Small console fixes of issue 14: the navigation reaches Policy, Backup and Synonyms, a skip
link leads to the content, and importance inputs take any value 0..1 (step="any")."""

import re

import pytest

from tests.views.conftest import tags, text

pytestmark = pytest.mark.django_db


def nav_links(body) -> list[str]:
    start, end = body.index('<nav class="mainnav"'), body.index("</nav>")
    return [a["href"] for t, a in tags(body[start:end]) if t == "a"]


def test_the_navigation_reaches_policy_backup_and_synonyms(admin_role_client, viewer_client):
    links = nav_links(text(admin_role_client.get("/")))
    assert {"/index/policy/", "/index/backup/", "/search/synonyms/"} <= set(links)
    # A viewer is not shown the admin pages (they would answer 403), only Synonyms.
    viewer_links = nav_links(text(viewer_client.get("/")))
    assert "/search/synonyms/" in viewer_links and "/index/policy/" not in viewer_links
    policy = text(admin_role_client.get("/index/policy/"))
    current = [a["href"] for t, a in tags(policy) if a.get("aria-current") == "page"]
    assert current == ["/index/policy/"]


def test_a_skip_link_leads_to_the_main_content(viewer_client):
    body = text(viewer_client.get("/memories/"))
    first_link = next(a for t, a in tags(body) if t == "a")
    assert first_link == {"class": "skip-link", "href": "#main"}
    assert any(t == "main" and a.get("id") == "main" for t, a in tags(body))


def test_importance_inputs_take_any_value(editor_client, make_memory):
    m = make_memory("The staging database is db-stage-2")
    for url in ("/memories/", f"/memories/{m.memory_id}/"):
        body = text(editor_client.get(url))
        steps = {a["name"]: a.get("step") for t, a in tags(body)
                 if t == "input" and "importance" in a.get("name", "")}
        assert steps and set(steps.values()) == {"any"}, (url, steps)
    resp = editor_client.post(f"/memories/{m.memory_id}/importance/",
                              {"importance": "0.737", "version": "1"})
    assert resp.status_code == 302
    m.refresh_from_db()
    assert m.importance == pytest.approx(0.737)


# A placeholder made of a number or a date reads as a value already filled in.
VALUE_LIKE = re.compile(r"^[\s\d.,:/-]*\d[\s\d.,:/-]*$")


def test_no_placeholder_looks_like_a_value(admin_role_client, make_memory):
    m = make_memory("The staging database is db-stage-2")
    pages = ["/", "/memories/", f"/memories/{m.memory_id}/", "/memories/new/", "/sessions/",
             "/activity/", "/search/?user_id=u-a&q=staging", "/search/compare/", "/lab/",
             "/index/", "/index/policy/?user_id=u-a", "/index/backup/", "/tokens/", "/users/",
             "/integrations/webhooks/"]
    seen = 0
    for url in pages:
        resp = admin_role_client.get(url)
        assert resp.status_code == 200, url
        for _, a in tags(text(resp)):
            if "placeholder" in a:
                seen += 1
                assert not VALUE_LIKE.match(a["placeholder"]), (url, a.get("name"),
                                                                 a["placeholder"])
    assert seen > 10
