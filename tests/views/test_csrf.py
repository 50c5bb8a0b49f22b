"""CSRF with htmx (public case B28): the token from the page's hx-headers works as the
X-CSRFToken header; without it the answer is 403, a small partial for htmx."""

import json

import pytest
from django.test import Client

from memories.models import Memory
from tests.views.conftest import HX, attr_values, text

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _csrf_view(settings):
    # memory_console/settings.py gains this line (see the report); set here until it does.
    settings.CSRF_FAILURE_VIEW = "memories.views.errors.csrf_failure"


@pytest.fixture
def strict(editor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    return client


def token_from(client, url) -> str:
    (value,) = attr_values(client.get(url).content, "hx-headers")
    return json.loads(value)["X-CSRFToken"]


def test_hx_post_with_the_page_token_works(strict, make_memory):
    m = make_memory(importance=0.5)
    token = token_from(strict, f"/memories/{m.memory_id}/")
    resp = strict.post(
        f"/memories/{m.memory_id}/importance/",
        {"importance": "0.7"},
        headers={**HX, "X-CSRFToken": token},
    )
    assert resp.status_code == 200 and "<html" not in text(resp)
    assert Memory.objects.get(pk=m.memory_id).importance == 0.7


def test_the_token_from_the_dashboard_works_too(strict, make_memory):
    m = make_memory()
    token = token_from(strict, "/")
    resp = strict.post(f"/memories/{m.memory_id}/forget/", {}, headers={**HX, "X-CSRFToken": token})
    assert resp.status_code == 200 and Memory.objects.get(pk=m.memory_id).is_forgotten


def test_hx_post_without_the_token_is_a_small_403(strict, make_memory):
    m = make_memory(importance=0.5)
    strict.get(f"/memories/{m.memory_id}/")  # the CSRF cookie is set; the header is missing
    resp = strict.post(f"/memories/{m.memory_id}/importance/", {"importance": "0.7"}, headers=HX)
    body = text(resp)
    assert resp.status_code == 403 and "<html" not in body and len(body) < 400
    assert "Reload the page" in body and resp["HX-Retarget"] == "#messages"
    assert Memory.objects.get(pk=m.memory_id).importance == 0.5


def test_a_wrong_token_is_refused(strict, make_memory):
    m = make_memory(importance=0.5)
    strict.get(f"/memories/{m.memory_id}/")
    resp = strict.post(
        f"/memories/{m.memory_id}/importance/",
        {"importance": "0.7"},
        headers={**HX, "X-CSRFToken": "x" * 32},
    )
    assert resp.status_code == 403
    assert Memory.objects.get(pk=m.memory_id).importance == 0.5


def test_a_plain_post_without_the_token_gets_the_full_403_page(strict, make_memory):
    m = make_memory()
    strict.get(f"/memories/{m.memory_id}/")
    resp = strict.post(f"/memories/{m.memory_id}/forget/", {})
    assert resp.status_code == 403 and "<html" in text(resp) and "Reload the page" in text(resp)
    assert not Memory.objects.get(pk=m.memory_id).is_forgotten


def test_the_form_token_works_without_javascript(strict, make_memory):
    m = make_memory()
    strict.get(f"/memories/{m.memory_id}/")
    token = strict.cookies["csrftoken"].value
    resp = strict.post(f"/memories/{m.memory_id}/forget/", {"csrfmiddlewaretoken": token})
    assert resp.status_code == 302 and Memory.objects.get(pk=m.memory_id).is_forgotten
