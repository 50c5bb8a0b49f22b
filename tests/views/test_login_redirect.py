"""Anonymous requests: a login redirect, and for HTMX a whole-window redirect."""

import pytest


@pytest.mark.django_db
def test_it_redirects_htmx_requests_with_the_whole_window(client):
    resp = client.get(
        "/memories/",
        headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/memories/?q=x"},
    )
    assert resp.status_code == 200
    assert resp["HX-Redirect"].startswith("/accounts/login/?next=")
    assert "q%3Dx" in resp["HX-Redirect"]


@pytest.mark.django_db
def test_it_redirects_plain_requests_to_the_login_page(client):
    resp = client.get("/memories/")
    assert resp.status_code == 302 and resp["Location"].startswith("/accounts/login/")
    assert client.get("/healthz").status_code == 200
