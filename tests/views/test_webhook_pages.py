"""The Webhooks pages (admin): endpoints, the form that adds one, each endpoint's delivery
log with "Send test event", Retry, enable/disable, secret rotation and delete."""

import pytest

from integrations.webhooks.models import WebhookDelivery, WebhookEndpoint
from memories.models import AuditEvent
from tests.conftest import work
from tests.test_webhooks import Receiver
from tests.views.conftest import HX, ids, text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues")]


@pytest.fixture(autouse=True)
def _allow_loopback(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    settings.WEBHOOKS_RETRY_BASE_SECONDS = 0
    settings.WEBHOOKS_MAX_ATTEMPTS = 2


@pytest.fixture
def receiver():
    r = Receiver((204,))
    yield r
    r.close()


def add(client, url, events=("memory.created",), namespaces=""):
    return client.post("/integrations/webhooks/new/",
                       {"url": url, "events": list(events), "namespaces": namespaces})


def test_only_admins_see_the_pages(editor_client, viewer_client, admin_role_client):
    assert editor_client.get("/integrations/webhooks/").status_code == 403
    assert viewer_client.post("/integrations/webhooks/new/", {}).status_code == 403
    page = admin_role_client.get("/integrations/webhooks/")
    assert page.status_code == 200 and "<html" in text(page)
    assert {"webhook-table", "webhook-form"} <= ids(text(page))
    assert 'href="/integrations/webhooks/"' in text(page)  # the nav link
    assert admin_role_client.post("/integrations/webhooks/").status_code == 405


def test_the_form_adds_an_endpoint_and_shows_its_secret(admin_role_client, receiver):
    resp = add(admin_role_client, receiver.url, namespaces="alice, bob")
    endpoint = WebhookEndpoint.objects.get()
    assert resp.status_code == 302 and resp["Location"] == f"/integrations/webhooks/{endpoint.pk}/"
    assert endpoint.namespaces == ["alice", "bob"] and endpoint.events == ["memory.created"]
    detail = admin_role_client.get(resp["Location"])
    assert endpoint.secret in text(detail) and "no-store" in detail["Cache-Control"]
    assert AuditEvent.objects.filter(action="webhook.create").count() == 1
    listing = text(admin_role_client.get("/integrations/webhooks/"))
    assert receiver.url in listing and "alice" in listing


def test_bad_input_is_a_form_error_and_nothing_is_saved(admin_role_client, settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    resp = add(admin_role_client, "http://127.0.0.1:9/hook")
    assert resp.status_code == 400 and "private" in text(resp)
    resp = add(admin_role_client, "https://example.com/", events=())
    assert resp.status_code == 400 and "field-error" in text(resp)
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_send_test_event_fills_the_delivery_log(admin_role_client, receiver):
    add(admin_role_client, receiver.url)
    endpoint = WebhookEndpoint.objects.get()
    fragment = admin_role_client.post(f"/integrations/webhooks/{endpoint.pk}/test/", headers=HX)
    body = text(fragment)
    assert fragment.status_code == 200 and "<html" not in body
    assert 'id="delivery-rows"' in body and "pending" in body and "webhook.test" in body
    work()
    page = text(admin_role_client.get(f"/integrations/webhooks/{endpoint.pk}/"))
    assert "delivered" in page and receiver.events()[0]["type"] == "webhook.test"
    # Without JavaScript the button posts and redirects back.
    plain = admin_role_client.post(f"/integrations/webhooks/{endpoint.pk}/test/")
    assert plain.status_code == 302


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_failed_delivery_can_be_retried(admin_role_client):
    failing = Receiver((500, 500, 204))
    try:
        add(admin_role_client, failing.url)
        endpoint = WebhookEndpoint.objects.get()
        admin_role_client.post(f"/integrations/webhooks/{endpoint.pk}/test/")
        work()
        delivery = WebhookDelivery.objects.get()
        assert (delivery.status, delivery.attempts) == ("failed", 2)
        page = text(admin_role_client.get(f"/integrations/webhooks/{endpoint.pk}/"))
        assert "HTTP 500" in page and "Retry</button>" in page
        admin_role_client.post(
            f"/integrations/webhooks/{endpoint.pk}/deliveries/{delivery.pk}/retry/")
        work()
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts) == ("delivered", 3)
    finally:
        failing.close()


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_delivered_event_keeps_each_earlier_attempts_error(admin_role_client):
    """After a success the errors before it stay in the row and on the page (they used to
    be overwritten by the last attempt's empty error)."""
    flaky = Receiver((500, 503, 204))
    try:
        add(admin_role_client, flaky.url)
        endpoint = WebhookEndpoint.objects.get()
        admin_role_client.post(f"/integrations/webhooks/{endpoint.pk}/test/")
        work()
        delivery = WebhookDelivery.objects.get()
        admin_role_client.post(
            f"/integrations/webhooks/{endpoint.pk}/deliveries/{delivery.pk}/retry/")
        work()
        delivery.refresh_from_db()
        page = text(admin_role_client.get(f"/integrations/webhooks/{endpoint.pk}/"))
    finally:
        flaky.close()
    assert (delivery.status, delivery.last_error) == ("delivered", "")
    assert [(a["status_code"], a["error"]) for a in delivery.attempt_log] == [
        (500, "HTTP 500"), (503, "HTTP 503"), (204, "")]
    assert "All 3 attempts" in page and "HTTP 500" in page and "HTTP 503" in page


def test_disable_rotate_and_delete(admin_role_client, receiver):
    add(admin_role_client, receiver.url)
    endpoint = WebhookEndpoint.objects.get()
    url = f"/integrations/webhooks/{endpoint.pk}/action/"
    assert admin_role_client.post(url, {"action": "disable"}).status_code == 302
    assert WebhookEndpoint.objects.get().active is False
    old = endpoint.secret
    admin_role_client.post(url, {"action": "rotate"})
    assert WebhookEndpoint.objects.get().secret != old
    assert admin_role_client.post(url, {"action": "explode"}).status_code == 400
    assert admin_role_client.post(url, {"action": "delete"}).status_code == 302
    assert not WebhookEndpoint.objects.exists()
    assert admin_role_client.get(f"/integrations/webhooks/{endpoint.pk}/").status_code == 404


@pytest.mark.parametrize("allowed", [True, False])
def test_the_form_says_whether_private_addresses_are_refused(admin_role_client, settings,
                                                             allowed):
    """The help text follows WEBHOOKS_ALLOW_PRIVATE: it used to say "refused" when allowed."""
    settings.WEBHOOKS_ALLOW_PRIVATE = allowed
    page = text(admin_role_client.get("/integrations/webhooks/"))
    assert ("networks are allowed" in page) is allowed
    assert ("networks are refused" in page) is not allowed
