"""Webhooks end to end: endpoints registered through the API, events written to the outbox
with the change, delivered by a real rq worker (burst, on the test Redis) to a real local
HTTP receiver, signed, retried, logged; purges scrub the outbox."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import transaction

from integrations.webhooks import signing
from integrations.webhooks.models import WebhookDelivery, WebhookEvent
from memories import queue as job_queue
from memories import services
from sessions.services import session_fold
from tests.conftest import work

# The PostgreSQL pass runs these (scripts/test -m postgres): the outbox's raw SQL and delivery row
# locks.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_queues"),
              pytest.mark.postgres]

ALL = ["memory.created", "memory.updated", "memory.forgotten", "memory.restored",
       "memory.rolled_back", "memory.purged", "session.folded", "job.finished"]


class Receiver:
    """An HTTP server on a free loopback port; answers ``statuses`` in order (the last
    repeats) and keeps every request's headers and raw body."""

    def __init__(self, statuses=(204,)):
        self.statuses, self.requests = list(statuses), []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append((dict(self.headers), body))
                status = (receiver.statuses.pop(0) if len(receiver.statuses) > 1
                          else receiver.statuses[0])
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self):
        return [json.loads(body) for _, body in self.requests]

    def types(self):
        return [e["type"] for e in self.events()]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    made = []

    def start(*statuses):
        made.append(Receiver(statuses or (204,)))
        return made[-1]

    yield start
    for r in made:
        r.close()


@pytest.fixture(autouse=True)
def _webhook_settings(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = True  # the receiver listens on loopback
    settings.WEBHOOKS_RETRY_BASE_SECONDS = 0  # retries run in the same burst
    settings.WEBHOOKS_MAX_ATTEMPTS = 4


def register(admin_api, url, events=ALL, **extra):
    response = admin_api.post("/webhooks", {"url": url, "events": events, **extra})
    assert response.status_code == 201, response.content
    return response.json()


def remember(api, user_id, content, **extra):
    response = api.post("/memories", {"user_id": user_id, "content": content, **extra})
    assert response.status_code == 201, response.content
    return response.json()


def test_only_an_unrestricted_admin_registers_endpoints(api, admin_api, viewer_api, settings):
    body = {"url": "http://127.0.0.1:9/hook", "events": ["memory.created"]}
    assert api.post("/webhooks", body).status_code == 403
    assert viewer_api.get("/webhooks").status_code == 403
    made = admin_api.post("/webhooks", body)
    assert made.status_code == 201 and made.json()["secret"].startswith("whsec_")
    assert "secret" not in admin_api.get("/webhooks").json()["webhooks"][0]

    bad = admin_api.post("/webhooks", {"url": "http://127.0.0.1:9/", "events": ["memory.eaten"]})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "events"
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    for url in ("http://127.0.0.1:9/hook", "http://localhost/hook", "http://169.254.169.254/",
                "http://[::1]/hook", "http://10.0.0.8/hook", "http://[::127.0.0.1]/hook",
                "http://[::7f00:1]/hook", "http://[64:ff9b::7f00:1]/hook",
                "http://[2002:7f00:1::]/hook"):
        refused = admin_api.post("/webhooks", {"url": url, "events": ["memory.created"]})
        assert refused.status_code == 400, url
        assert refused.json()["error"]["field"] == "url"


def test_a_receiver_sees_remember_recall_forget_signed_and_once_each(
        receiver, api, admin_api):
    hook = receiver()
    endpoint = register(admin_api, hook.url)
    memory = remember(api, "alice", "Alice's locker code is 4711")
    recall = api.post("/recall", {"user_id": "alice", "query": "locker code"}).json()
    assert [r["memory_id"] for r in recall["results"]] == [memory["memory_id"]]
    assert api.delete(f"/memories/{memory['memory_id']}?reason=done").status_code == 204
    work()

    assert hook.types() == ["memory.created", "memory.forgotten"]  # a recall changes nothing
    created, forgotten = hook.events()
    assert created["data"]["memory"]["content"] == "Alice's locker code is 4711"
    assert created["namespace"] == "alice" and created["id"] != forgotten["id"]
    assert forgotten["data"]["memory"]["deleted_at"] and forgotten["data"]["reason"] == "done"
    for headers, body in hook.requests:
        assert signing.verify(endpoint["secret"], body, headers[signing.HEADER])
        assert headers["X-Memory-Console-Event-Id"] == json.loads(body)["id"]
        with pytest.raises(signing.SignatureError):
            signing.verify("whsec_wrong", body, headers[signing.HEADER])

    log = admin_api.get(f"/webhooks/{endpoint['id']}/deliveries").json()
    assert [(d["type"], d["status"], d["attempts"]) for d in log["deliveries"]] == [
        ("memory.forgotten", "delivered", 1), ("memory.created", "delivered", 1)]
    assert log["next_cursor"] is None


def test_a_receiver_that_fails_twice_gets_the_event_on_the_third_try(receiver, api, admin_api):
    hook = receiver(500, 503, 200)
    endpoint = register(admin_api, hook.url, events=["memory.created"])
    remember(api, "bob", "Bob parks on level 3")
    work()

    ids = [e["id"] for e in hook.events()]
    assert len(ids) == 3 and len(set(ids)) == 1  # the same event id: receivers dedup by it
    [delivery] = admin_api.get(f"/webhooks/{endpoint['id']}/deliveries").json()["deliveries"]
    assert delivery["status"] == "delivered" and delivery["attempts"] == 3
    assert delivery["last_status_code"] == 200 and delivery["last_error"] == ""


def test_it_gives_up_after_the_last_attempt_and_logs_why(receiver, api, admin_api):
    hook = receiver(500)
    endpoint = register(admin_api, hook.url, events=["memory.created"])
    remember(api, "bob", "Bob's printer is on floor 2")
    work()

    assert len(hook.requests) == 4  # WEBHOOKS_MAX_ATTEMPTS
    [delivery] = admin_api.get(f"/webhooks/{endpoint['id']}/deliveries").json()["deliveries"]
    assert (delivery["status"], delivery["attempts"], delivery["last_error"]) == (
        "failed", 4, "HTTP 500")
    failed = admin_api.get(f"/webhooks/{endpoint['id']}/deliveries?status=failed").json()
    assert len(failed["deliveries"]) == 1


def test_namespace_filters_and_event_choice_decide_who_hears(receiver, api, admin_api):
    for_alice, for_all = receiver(), receiver()
    register(admin_api, for_alice.url, events=["memory.created"], namespaces=["alice"])
    register(admin_api, for_all.url, events=["memory.forgotten"])
    remember(api, "alice", "Alice likes jasmine tea")
    bob = remember(api, "bob", "Bob likes oolong tea")
    api.delete(f"/memories/{bob['memory_id']}")
    work()

    assert [e["namespace"] for e in for_alice.events()] == ["alice"]
    assert for_all.types() == ["memory.forgotten"]


def test_a_write_that_rolls_back_leaves_no_event(receiver, admin_api, editor):
    register(admin_api, receiver().url)

    class Boom(Exception):
        pass

    with pytest.raises(Boom), transaction.atomic():
        services.memory_create(actor=editor, user_id="carol", content="never committed")
        raise Boom
    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


def test_every_memory_change_has_its_event(receiver, api, admin_api):
    hook = receiver()
    register(admin_api, hook.url)
    memory = remember(api, "dana", "Dana's train leaves at 8")
    mid = memory["memory_id"]
    api.patch(f"/memories/{mid}", {"content": "Dana's train leaves at 9"})
    api.delete(f"/memories/{mid}")
    api.post(f"/memories/{mid}/restore", {"reason": "mistake"})
    admin_api.post(f"/memories/{mid}/rollback", {"version": 1, "reason": "back to 8"})
    work()  # before the purge, which cancels what is still pending for this memory
    admin_api.delete(f"/memories/{mid}?purge=1")
    work()

    assert hook.types() == ["memory.created", "memory.updated", "memory.forgotten",
                            "memory.restored", "memory.rolled_back", "memory.purged"]
    rolled_back = hook.events()[4]["data"]["memory"]
    assert rolled_back["version"] == 5 and rolled_back["content"] == "Dana's train leaves at 8"


def test_a_purge_scrubs_the_memory_from_the_outbox_and_the_log(receiver, api, admin_api):
    content = "Erin's recovery phrase: velvet orbit lantern"
    hook = receiver(500)  # deliveries fail: their rows keep errors and stay around
    register(admin_api, hook.url, events=["memory.created", "memory.updated",
                                          "memory.purged"])
    memory = remember(api, "erin", content)
    api.patch(f"/memories/{memory['memory_id']}", {"content": content + " (confirmed)"})
    admin_api.delete(f"/memories/{memory['memory_id']}?purge=1")

    stored = json.dumps([e.payload for e in WebhookEvent.objects.all()])
    stored += json.dumps(list(WebhookDelivery.objects.values_list("last_error", flat=True)))
    assert "velvet" not in stored
    assert WebhookEvent.objects.filter(type="memory.purged").count() == 1
    statuses = dict(WebhookDelivery.objects.values_list("event__type", "status"))
    assert statuses == {"memory.created": "cancelled", "memory.updated": "cancelled",
                        "memory.purged": "pending"}
    work()
    assert "velvet" not in json.dumps(hook.events())  # only the purge was attempted
    assert hook.types() == ["memory.purged"] * 4


def test_the_test_event_button_in_the_api(receiver, admin_api):
    hook = receiver()
    endpoint = register(admin_api, hook.url, events=["memory.created"])
    sent = admin_api.post(f"/webhooks/{endpoint['id']}/test")
    assert sent.status_code == 202
    work()
    assert hook.types() == ["webhook.test"] and hook.events()[0]["id"] == sent.json()["event_id"]


def test_delivery_refuses_a_private_address_once_the_setting_is_off(receiver, api, admin_api,
                                                                    settings):
    hook = receiver()
    endpoint = register(admin_api, hook.url, events=["memory.created"])
    settings.WEBHOOKS_ALLOW_PRIVATE = False  # e.g. DNS now points inside
    remember(api, "frank", "Frank's badge number is 88")
    work()
    assert hook.requests == []
    [delivery] = admin_api.get(f"/webhooks/{endpoint['id']}/deliveries").json()["deliveries"]
    assert delivery["status"] == "failed" and delivery["attempts"] == 1
    assert delivery["last_error"].startswith("refused:")


def test_endpoints_page_through_cursors_and_unknown_ones_404(admin_api):
    for n in range(3):
        register(admin_api, f"http://127.0.0.1:9/{n}", events=["memory.created"])
    first = admin_api.get("/webhooks?limit=2").json()
    assert len(first["webhooks"]) == 2 and first["next_cursor"]
    rest = admin_api.get(f"/webhooks?limit=2&cursor={first['next_cursor']}").json()
    assert [w["url"] for w in rest["webhooks"]] == ["http://127.0.0.1:9/2"]
    assert rest["next_cursor"] is None
    assert admin_api.get("/webhooks/999999").status_code == 404
    assert admin_api.get("/webhooks?cursor=zz").json()["error"]["field"] == "cursor"


def test_a_session_fold_and_a_finished_job_are_events(receiver, api, admin_api):
    hook = receiver()
    register(admin_api, hook.url, events=["session.folded", "job.finished"])
    session = api.post("/sessions", {"user_id": "gail"}).json()["session_id"]
    api.post(f"/sessions/{session}/messages", {"messages": [
        {"role": "user", "content": f"Message number {n} about the Lisbon trip"}
        for n in range(12)]})
    assert session_fold(session_id=session, keep=2)["folded"] == 10
    job_id = admin_api.post("/reindex", {"user_id": "gail"}).json()["job_id"]
    work()

    by_type = {e["type"]: e for e in hook.events()}
    folded = by_type["session.folded"]["data"]["session"]
    assert folded["session_id"] == session and folded["folded"] == 10 and folded["summary"]
    job = by_type["job.finished"]
    assert job["namespace"] == "gail"
    assert job["data"]["job"]["job_id"] == job_id and job["data"]["job"]["status"] == "finished"
    assert job["data"]["job"]["func"] == "reindex_job"


def test_round_trip_against_a_running_server_with_the_python_client(receiver, live_server,
                                                                     builtins):
    from memory_console_client import MemoryConsole

    from tests.test_client import make_token

    hook = receiver()
    admin = MemoryConsole(live_server.url, make_token("wh-admin", "admin"))
    agent = MemoryConsole(live_server.url, make_token("wh-agent", "editor"))
    webhook = admin.create_webhook(hook.url, ["memory.created", "memory.forgotten"],
                                   namespaces=["ivan"], description="round trip")
    assert webhook.secret and admin.get_webhook(webhook.id).events == webhook.events

    made = agent.remember("ivan", "Ivan's standup moved to 9:30")
    assert [h.memory_id for h in agent.recall("ivan", "when is standup?").results] == [
        made.memory_id]
    agent.forget(made.memory_id)
    work()

    assert hook.types() == ["memory.created", "memory.forgotten"]
    assert all(signing.verify(webhook.secret, body, headers[signing.HEADER])
               for headers, body in hook.requests)
    log = admin.list_deliveries(webhook.id)
    assert [(d.type, d.status) for d in log.items] == [
        ("memory.forgotten", "delivered"), ("memory.created", "delivered")]
    event_id = admin.send_test_event(webhook.id)
    work()
    assert hook.events()[-1]["id"] == event_id
    admin.delete_webhook(webhook.id)
    assert admin.list_webhooks().items == []


def test_the_periodic_sweep_redelivers_what_a_lost_enqueue_left_pending(receiver, api,
                                                                        admin_api):
    import datetime as dt

    from operations.jobs import periodic_reconcile_job

    hook = receiver()
    register(admin_api, hook.url, events=["memory.created"])
    remember(api, "hana", "Hana's flight is LH 402")
    job_queue.get_queue("default").empty()  # as if the process died right after the commit
    assert WebhookDelivery.objects.get().status == "pending"
    assert periodic_reconcile_job()["webhooks_requeued"] == 0  # too recent to be stale
    old = WebhookDelivery.objects.get().created_at - dt.timedelta(hours=2)
    WebhookDelivery.objects.update(created_at=old)  # test set-up: age the row
    assert periodic_reconcile_job()["webhooks_requeued"] == 1
    work()
    assert hook.types() == ["memory.created"]
    assert WebhookDelivery.objects.get().status == "delivered"
    from rq.registry import ScheduledJobRegistry

    from operations.jobs import PERIODIC_RECONCILE_ID

    ScheduledJobRegistry(queue=job_queue.get_queue("index")).remove(PERIODIC_RECONCILE_ID,
                                                                   delete_job=True)


def test_a_replace_import_scrubs_the_replaced_memories_from_the_outbox(receiver, api,
                                                                      admin_api):
    hook = receiver(500)
    register(admin_api, hook.url, events=["memory.created"])
    remember(api, "ines", "Ines' safe combination is 31-7-22")
    doc = admin_api.get("/export?user_id=ines").json()
    doc["memories"][0].update(content="Ines changed the combination", memory_id=None)
    assert admin_api.call("post", "/import?mode=replace", doc).status_code == 200
    assert "31-7-22" not in json.dumps([e.payload for e in WebhookEvent.objects.all()])
    assert WebhookDelivery.objects.get().status == "cancelled"


def test_each_attempt_is_counted_in_the_metrics(receiver, api, admin_api, viewer):
    from accounts.tokens import token_create
    from tests.test_metrics import scrape, value

    token = token_create(user=viewer)
    name = "memory_console_webhook_deliveries_total"
    before = scrape(token)
    hook = receiver(500, 200)
    register(admin_api, hook.url, events=["memory.created"])
    remember(api, "jae", "Jae's locker is 12")
    work()
    after = scrape(token)
    grew = {o: value(after, name, event="memory.created", outcome=o)
            - value(before, name, event="memory.created", outcome=o)
            for o in ("delivered", "failed", "gave_up")}
    assert grew == {"delivered": 1, "failed": 1, "gave_up": 0}


def test_a_url_with_control_characters_or_port_0_is_refused_in_the_api_and_the_console(
        admin_api, admin_role_client):
    from integrations.webhooks.models import WebhookEndpoint

    bad = ("http://127.0.0.1:9/hook\r\nX-Injected: 1", "http://127.0.0.1:9/a b",
           "http://127.0.0.1:0/hook", "http://a..b:9/hook", "http://[fe80::1%25%ff]:9/")
    for url in bad:
        refused = admin_api.post("/webhooks", {"url": url, "events": ["memory.created"]})
        assert refused.status_code == 400, url
        assert refused.json()["error"]["field"] == "url"
    endpoint = register(admin_api, "http://127.0.0.1:9/hook", events=["memory.created"])
    for url in bad:
        patched = admin_api.patch(f"/webhooks/{endpoint['id']}", {"url": url})
        assert patched.status_code == 400 and patched.json()["error"]["field"] == "url", url
        page = admin_role_client.post("/integrations/webhooks/new/",
                                      {"url": url, "events": ["memory.created"]})
        assert page.status_code == 400, url
        assert '<p class="field-error">' in page.content.decode()
    assert list(WebhookEndpoint.objects.values_list("url", flat=True)) == [
        "http://127.0.0.1:9/hook"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook\r\nX-Injected: 1",
                                 "http://a..b:9/hook"])
def test_a_stored_url_that_cannot_be_sent_fails_with_its_error_instead_of_staying_pending(
        url, api, admin_api):
    from integrations.webhooks.models import WebhookEndpoint

    endpoint = register(admin_api, "http://127.0.0.1:9/hook", events=["memory.created"])
    # Test set-up: a row stored before such URLs were refused (the writer refuses it now).
    WebhookEndpoint.objects.filter(pk=endpoint["id"]).update(url=url)
    remember(api, "olga", "Olga's desk is on the fourth floor")
    work()
    [delivery] = admin_api.get(f"/webhooks/{endpoint['id']}/deliveries").json()["deliveries"]
    assert delivery["status"] == "failed" and delivery["attempts"] == 1
    assert delivery["last_error"].startswith("refused:")
