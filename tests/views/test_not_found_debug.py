"""With ``DEBUG`` on, an unknown session, job or memory answers the console's own 404 page (or
htmx fragment), never Django's technical 404 page; with it off, the same page."""

import pytest
from django.test import override_settings

from console.pages import FRAGMENT_HEADER
from tests.views.conftest import HX, ids, text

pytestmark = pytest.mark.django_db

TECHNICAL = ("Django tried these URL patterns", "technical_404", "You’re seeing this error")


@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("/sessions/no-such-session/", "This session does not exist"),
        ("/sessions/%E4%BC%9A%E8%AF%9D:1/", "This session does not exist"),
        ("/index/jobs/no-such-job/", "This job does not exist"),
        ("/index/jobs/" + "x" * 70 + "/", "This job does not exist"),
        ("/memories/mem_0000000000000000/", "This memory does not exist"),
    ],
)
def test_it_shows_its_own_404_page(admin_role_client, debug, url, what):
    with override_settings(DEBUG=debug):
        resp = admin_role_client.get(url)
    body = text(resp)
    assert resp.status_code == 404 and "<html" in body and "not-found" in ids(body)
    assert what in body and not any(t in body for t in TECHNICAL)
    assert 'class="skip-link"' in body  # the console's own layout, navigation included


@pytest.mark.parametrize(
    "url",
    [
        "/sessions/no-such-session/warm/",
        "/sessions/no-such-session/messages/1/promote/",
        "/index/jobs/no-such-job/retry/",
    ],
)
def test_actions_on_unknown_objects_answer_the_own_404(admin_role_client, url):
    with override_settings(DEBUG=True):
        page = admin_role_client.post(url)
        fragment = admin_role_client.post(url, headers={**HX, "HX-Target": "panel"})
    assert page.status_code == 404 and "not-found" in ids(text(page))
    assert not any(t in text(page) for t in TECHNICAL)
    assert fragment.status_code == 404 and "<html" not in text(fragment)
    assert "no longer exists" in text(fragment) and 'id="panel"' in text(fragment)
    assert fragment[FRAGMENT_HEADER] == "1"  # not django-htmx's debug handler's to show


def test_an_unknown_url_keeps_djangos_debug_page(admin_role_client):
    """No view ran, so the developer still sees the URL patterns."""
    with override_settings(DEBUG=True):
        resp = admin_role_client.get("/no-such-page/")
    assert resp.status_code == 404 and "Django tried these URL patterns" in text(resp)
    assert FRAGMENT_HEADER not in resp  # for htmx, django-htmx's debug handler shows it whole


def test_the_api_keeps_json_404s(admin_role_client, admin_user):
    from tests.conftest import ApiClient

    with override_settings(DEBUG=True):
        resp = ApiClient(admin_user).get("/sessions/no-such-session")
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("debug", "url"),
    [
        (True, "/sessions/no-such-session/"),
        (False, "/sessions/no-such-session/"),
        # A URL no pattern matches: with DEBUG on it is Django's list of patterns, by design.
        (False, "/no-such-page/"),
    ],
)
def test_the_404_pages_navigation_keeps_the_admin_links_and_the_role_badge(
    admin_role_client, debug, url
):
    with override_settings(DEBUG=debug):
        body = text(admin_role_client.get(url))
    assert 'href="/tokens/"' in body and 'href="/index/policy/"' in body
    assert '<span class="badge badge-role" title="your role">admin</span>' in body


@pytest.mark.parametrize("debug", [True, False])
def test_the_csrf_403_pages_navigation_keeps_the_role_badge(admin_user, debug):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    with override_settings(DEBUG=debug):
        resp = client.post("/tokens/new/", {"username": "x"})
    body = text(resp)
    assert resp.status_code == 403 and 'href="/tokens/"' in body
    assert '<span class="badge badge-role" title="your role">admin</span>' in body
