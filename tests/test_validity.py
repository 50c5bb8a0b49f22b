"""Facts over time: ``supersedes``, ``valid_from``, invalidate and revalidate, and recall
that answers the facts valid now, as of a moment, or all of them."""

import pytest

from integrations.webhooks.models import WebhookEvent
from memories.models import AuditEvent, Memory
from tests.helpers import recall

# The PostgreSQL pass runs these (scripts/test -m postgres): supersession's row locks.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

ALICE = "where does Alice live"
PORTO = "Alice lives in Porto, near the river."
MADRID = "Alice moved to Madrid; she no longer lives in Porto."


def remember(api, content, status=201, **kw):
    resp = api.post("/memories", {"user_id": "u-a", "content": content, **kw})
    assert resp.status_code == status, resp.content
    return resp.json()


def porto_then_madrid(api):
    porto = remember(api, PORTO, valid_from="2026-06-01T00:00:00Z", supersession="off")
    madrid = remember(api, MADRID, valid_from="2026-08-01T00:00:00Z",
                      supersedes=[porto["memory_id"]], supersession="off")
    return porto, madrid


def test_a_newer_fact_supersedes_an_older_one_linked_both_ways(api):
    porto, madrid = porto_then_madrid(api)
    assert madrid["supersedes"] == [porto["memory_id"]]
    assert madrid["valid_from"].startswith("2026-08-01T00:00:00")
    assert madrid["valid_until"] is None and madrid["superseded_by"] is None
    older = api.get(f"/memories/{porto['memory_id']}").json()
    assert older["superseded_by"] == madrid["memory_id"]
    assert older["valid_until"] == madrid["valid_from"]
    assert older["valid_from"].startswith("2026-06-01") and older["version"] == 2
    assert older["deleted_at"] is None and older["content"] == PORTO
    history = api.get(f"/memories/{porto['memory_id']}/history").json()["versions"]
    assert [v["kind"] for v in history] == ["create", "supersede"]
    assert AuditEvent.objects.filter(action="supersede", target=porto["memory_id"]).exists()


def test_recall_answers_madrid_now_porto_as_of_july_and_both_when_asked(api):
    porto, madrid = porto_then_madrid(api)
    now = recall(api, ALICE)
    assert [h["memory_id"] for h in now] == [madrid["memory_id"]]
    july = recall(api, ALICE, as_of="2026-07-15T00:00:00Z")
    assert [h["memory_id"] for h in july] == [porto["memory_id"]]
    assert july[0]["valid_until"].startswith("2026-08-01")
    both = recall(api, ALICE, include_superseded=True)
    by_id = {h["memory_id"]: h for h in both}
    assert set(by_id) == {porto["memory_id"], madrid["memory_id"]}
    old = by_id[porto["memory_id"]]
    assert old["superseded_by"] == madrid["memory_id"]
    assert old["explain"]["validity"] == (f"superseded by {madrid['memory_id']} since "
                                          f"{old['valid_until']}")
    assert by_id[madrid["memory_id"]]["explain"]["validity"] is None


def test_as_of_reads_validity_whenever_the_memory_was_recorded(api):
    # Recorded today, about last year: as of last year it held, as of before it did not.
    fact = remember(api, "The Lisbon office was on Rua Augusta.",
                    valid_from="2025-01-01T00:00:00Z")
    ids = [h["memory_id"] for h in recall(api, "Lisbon office", as_of="2025-06-01T00:00:00Z")]
    assert ids == [fact["memory_id"]]
    assert recall(api, "Lisbon office", as_of="2024-06-01T00:00:00Z") == []


def test_a_recall_leaves_superseded_facts_out(api):
    porto, madrid = porto_then_madrid(api)
    # Enough other matches that a window is needed: the filter must widen, not starve.
    for n in range(12):
        remember(api, f"Alice's colleague number {n} lives in Porto too.", supersession="off")
    top = recall(api, "Alice lives Porto", limit=3)
    assert porto["memory_id"] not in [h["memory_id"] for h in top] and len(top) == 3
    assert recall(api, "Alice lives Porto", limit=3, as_of="2026-07-01T00:00:00Z")[0][
        "memory_id"] == porto["memory_id"]


def test_invalidate_ends_a_fact_and_revalidate_undoes_it(api):
    fact = remember(api, "Bob is the on-call engineer for the billing system.",
                    supersession="off")
    memory_id = fact["memory_id"]
    no_reason = api.post(f"/memories/{memory_id}/invalidate", {})
    assert no_reason.status_code == 400 or no_reason.status_code == 422
    ended = api.post(f"/memories/{memory_id}/invalidate", {"reason": "rotation ended"})
    assert ended.status_code == 200, ended.content
    body = ended.json()
    assert body["valid_until"] is not None and body["superseded_by"] is None
    assert recall(api, "on-call billing") == []
    again = api.post(f"/memories/{memory_id}/invalidate", {"reason": "twice"})
    assert again.status_code == 409 and again.json()["error"]["field"] == "memory_id"
    back = api.post(f"/memories/{memory_id}/revalidate", {"reason": "rotation extended"})
    assert back.status_code == 200 and back.json()["valid_until"] is None
    assert [h["memory_id"] for h in recall(api, "on-call billing")] == [memory_id]
    kinds = [v["kind"] for v in api.get(f"/memories/{memory_id}/history").json()["versions"]]
    assert kinds == ["create", "invalidate", "revalidate"]
    assert set(AuditEvent.objects.filter(target=memory_id).values_list("action", flat=True)) \
        >= {"invalidate", "revalidate"}


def test_invalidate_takes_an_end_in_the_past_and_refuses_one_before_the_start(api):
    fact = remember(api, "Carol leads the data team.", valid_from="2026-01-01T00:00:00Z",
                    supersession="off")
    url = f"/memories/{fact['memory_id']}/invalidate"
    early = api.post(url, {"reason": "r", "valid_until": "2025-01-01T00:00:00Z"})
    assert early.status_code == 400 and early.json()["error"]["field"] == "valid_until"
    bad = api.post(url, {"reason": "r", "valid_until": "next week"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "valid_until"
    ok = api.post(url, {"reason": "left in March", "valid_until": "2026-03-01T00:00:00Z"})
    assert ok.status_code == 200
    assert [h["memory_id"] for h in recall(api, "Carol data team",
                                           as_of="2026-02-01T00:00:00Z")] == [fact["memory_id"]]
    assert recall(api, "Carol data team") == []


def test_supersedes_refuses_unknown_foreign_self_and_cycles_and_changes_nothing(api):
    a = remember(api, "Dan's desk is on floor 2.", supersession="off")
    other = api.post("/memories", {"user_id": "u-b", "content": "Dan's desk is on floor 9."})
    assert other.status_code == 201
    unknown = api.post("/memories", {"user_id": "u-a", "content": "Dan's desk is on floor 3.",
                                     "supersedes": ["mem_0000000000000000"]})
    assert unknown.status_code == 404 and unknown.json()["error"]["field"] == "supersedes"
    foreign = api.post("/memories", {"user_id": "u-a", "content": "Dan's desk is on floor 4.",
                                     "supersedes": [other.json()["memory_id"]]})
    assert foreign.status_code == 404 and foreign.json()["error"]["field"] == "supersedes"
    assert Memory.objects.filter(user_id="u-a").count() == 1  # neither write happened
    self_ = api.patch(f"/memories/{a['memory_id']}", {"supersedes": [a["memory_id"]]})
    assert self_.status_code == 409
    b = remember(api, "Dan's desk is on floor 5.", supersedes=[a["memory_id"]],
                 supersession="off")
    cycle = api.patch(f"/memories/{a['memory_id']}", {"supersedes": [b["memory_id"]]})
    assert cycle.status_code == 409 and cycle.json()["error"]["field"] == "supersedes"
    assert api.get(f"/memories/{b['memory_id']}").json()["superseded_by"] is None


def test_patch_supersedes_and_a_retried_create_is_idempotent(api):
    a = remember(api, "The staging database runs Postgres 15.", supersession="off")
    b = remember(api, "The staging database runs Postgres 16.", supersession="off")
    patched = api.patch(f"/memories/{b['memory_id']}", {"supersedes": [a["memory_id"]],
                                                         "reason": "upgraded"})
    assert patched.status_code == 200 and patched.json()["supersedes"] == [a["memory_id"]]
    retry = remember(api, "The staging database runs Postgres 16.", status=200,
                     supersedes=[a["memory_id"]])
    assert retry["deduplicated"] is True
    assert Memory.objects.get(pk=a["memory_id"]).version == 2  # superseded once


def test_validity_changes_send_their_webhook_events(api, admin_api, settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = True  # a loopback URL; nothing is delivered here
    hook = admin_api.post("/webhooks", {
        "url": "http://127.0.0.1:9/hook", "events": ["memory.superseded", "memory.invalidated",
                                                     "memory.revalidated"]})
    assert hook.status_code == 201, hook.content
    porto, madrid = porto_then_madrid(api)
    api.post(f"/memories/{madrid['memory_id']}/invalidate", {"reason": "moved again"})
    api.post(f"/memories/{madrid['memory_id']}/revalidate", {"reason": "no, still there"})
    events = list(WebhookEvent.objects.order_by("id").values_list("type", "payload"))
    assert [t for t, _ in events] == ["memory.superseded", "memory.invalidated",
                                      "memory.revalidated"]
    superseded = events[0][1]["memory"]
    assert superseded["superseded_by"] == madrid["memory_id"]
    assert superseded["valid_until"] is not None


def test_a_memory_list_and_export_carry_validity(api):
    porto, madrid = porto_then_madrid(api)
    rows = api.get("/memories?user_id=u-a").json()["memories"]
    by_id = {m["memory_id"]: m for m in rows}
    assert by_id[porto["memory_id"]]["superseded_by"] == madrid["memory_id"]
    assert by_id[madrid["memory_id"]]["supersedes"] == [porto["memory_id"]]


def test_export_and_replace_import_keep_validity_and_the_queue(api, admin_api):
    porto, madrid = porto_then_madrid(api)
    remember(api, "Alice works at Initech.")
    remember(api, "Alice works at Globex now.")  # proposes: open
    doc = admin_api.get("/export?user_id=u-a").json()
    assert doc["schema_version"] == 5 and len(doc["conflicts"]) == 1
    item = {m["memory_id"]: m for m in doc["memories"]}[porto["memory_id"]]
    assert item["superseded_by"] == madrid["memory_id"] and item["valid_until"]
    api.post(f"/memories/{madrid['memory_id']}/invalidate", {"reason": "changed later"})
    restored = admin_api.post("/import?mode=replace", doc)
    assert restored.status_code == 200 and restored.json()["conflicts"] == 1
    assert api.get(f"/memories/{madrid['memory_id']}").json()["valid_until"] is None
    assert api.get(f"/memories/{porto['memory_id']}").json()["superseded_by"] == madrid["memory_id"]
    assert [h["memory_id"] for h in recall(api, "lives Porto Madrid")] == [madrid["memory_id"]]
    assert [h["memory_id"] for h in recall(api, "lives Porto Madrid",
                                           as_of="2026-07-01T00:00:00Z")] == [porto["memory_id"]]
    [c] = api.get("/conflicts?user_id=u-a").json()["conflicts"]
    assert c["status"] == "open" and "globex" in c["reason"]
    # Slots came back with the memories: a later write still finds the restored fact.
    remember(api, "Alice works at Hooli now.")
    assert len(api.get("/conflicts?user_id=u-a").json()["conflicts"]) == 2


def test_an_older_export_imports_facts_holding_from_their_creation(admin_api, api):
    doc = {"schema_version": 2, "user_id": "u-a", "memories": [
        {"user_id": "u-a", "content": "Eve lives in Oslo.", "created_at": "2025-03-01T00:00:00Z"}]}
    assert admin_api.post("/import?mode=replace", doc).status_code == 200
    [m] = api.get("/memories?user_id=u-a").json()["memories"]
    assert m["valid_from"] == m["created_at"] and m["valid_until"] is None
    assert m["superseded_by"] is None


def test_a_merge_import_keeps_when_a_fact_ended(admin_api, api):
    doc = {"schema_version": 3, "memories": [
        {"user_id": "u-a", "content": "Finn's team uses Jira.", "valid_from": "2025-01-01T00:00:00Z",
         "valid_until": "2025-06-01T00:00:00Z"}]}
    assert admin_api.post("/import", doc).status_code == 200
    assert recall(api, "Finn team Jira") == []
    assert len(recall(api, "Finn team Jira", as_of="2025-03-01T00:00:00Z")) == 1
    bad = {"schema_version": 3, "memories": [
        {"user_id": "u-a", "content": "x", "valid_from": "2025-06-01T00:00:00Z",
         "valid_until": "2025-01-01T00:00:00Z"}]}
    resp = admin_api.post("/import", bad)
    assert resp.status_code == 400 and resp.json()["error"]["field"] == "valid_until"


def test_time_words_in_the_query_ask_for_the_facts_of_that_time(api):
    porto = remember(api, PORTO, created_at="2026-06-05T10:00:00Z", supersession="off")
    madrid = remember(api, MADRID, created_at="2026-08-02T10:00:00Z",
                      supersedes=[porto["memory_id"]], supersession="off")
    now = "2026-09-01T12:00:00Z"
    june = recall(api, "where did Alice live in June?", now=now)
    assert june[0]["memory_id"] == porto["memory_id"]
    assert recall(api, "where does Alice live?", now=now)[0]["memory_id"] == madrid["memory_id"]
    # A range that begins after Porto ended leaves it out.
    assert porto["memory_id"] not in [h["memory_id"] for h in
                                      recall(api, "where did Alice live last week?", now=now)]


def test_validity_composes_with_the_filters(api):
    porto = remember(api, PORTO, valid_from="2026-06-01T00:00:00Z", author="crm",
                     tags=["home"], supersession="off")
    remember(api, MADRID, valid_from="2026-08-01T00:00:00Z", author="chat",
             supersedes=[porto["memory_id"]], supersession="off")
    july = "2026-07-01T00:00:00Z"
    assert [h["memory_id"] for h in recall(api, "Alice Porto Madrid", as_of=july,
                                           author="crm", tags=["home"])] == [porto["memory_id"]]
    assert recall(api, "Alice Porto Madrid", as_of=july, author="chat") == []
    assert recall(api, "Alice Porto Madrid", author="crm") == []  # ended now
    both = recall(api, "Alice Porto Madrid", include_superseded=True, author="crm")
    assert [h["memory_id"] for h in both] == [porto["memory_id"]]
