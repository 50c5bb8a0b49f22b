"""Context built by the server on every write path (memories.services.context,
sessions.promote), through the HTTP API: conversation turns, promoted session messages, the
next turn arriving, PATCH, rollback, promote, and recall seeing it (explain names the
context terms)."""

import io
import json
import re

import pytest
from django.conf import settings
from django.core.management import call_command

from memories import store
from memories.models import AuditEvent
from operations.backup import export_memories
from search.memory_search import memory_search
from search.serving import feed as serving_feed
from search.serving import snapshot
from tests.conftest import ApiClient
from tests.helpers import recall

# The PostgreSQL pass runs these (scripts/test -m postgres): the context rebuild's raw SQL.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

T0 = "2026-11-20T10:00:00+00:00"


@pytest.fixture
def api_admin(admin_user):
    return ApiClient(admin_user)


def turn(api, content, n, conversation="c-1", **kw):
    resp = api.post("/memories", {"user_id": "u-a", "conversation_id": conversation,
                                  "content": content,
                                  "created_at": f"2026-11-20T10:00:{n:02d}+00:00", **kw})
    assert resp.status_code == 201, resp.content
    return resp.json()


def get(api, memory_id):
    return api.get(f"/memories/{memory_id}").json()


def test_a_turn_gets_the_previous_turns_and_then_the_next(api):
    a = turn(api, "Calvin: my studio flooded last night", 1)
    assert a["context"] == "" and a["context_from"] == "conversation"
    b = turn(api, "Dave: oh no, was the mixing desk damaged?", 2)
    assert b["context"] == "Calvin: my studio flooded last night"
    # The previous turn gained the next one before b's write returned.
    assert get(api, a["memory_id"])["context"] == "Dave: oh no, was the mixing desk damaged?"
    c = turn(api, "Calvin: the desk is fine, the carpet is ruined", 3)
    d = turn(api, "Dave: glad the gear survived", 4)
    assert get(api, c["memory_id"])["context"] == (
        "Calvin: my studio flooded last night\n"
        "Dave: oh no, was the mixing desk damaged?\n"
        "Dave: glad the gear survived")
    # Only two previous turns and one next one.
    assert get(api, d["memory_id"])["context"] == (
        "Dave: oh no, was the mixing desk damaged?\n"
        "Calvin: the desk is fine, the carpet is ruined")


def test_the_next_turn_is_searchable_in_the_previous_memory_at_once(api):
    a = turn(api, "Calvin: my studio flooded last night", 1)
    turn(api, "Dave: was the mixing desk damaged?", 2)
    hits = recall(api, "mixing desk")
    by_id = {h["memory_id"]: h for h in hits}
    assert a["memory_id"] in by_id
    assert "desk" in by_id[a["memory_id"]]["explain"]["context_terms"]


def test_the_rebuild_writes_no_version(api):
    a = turn(api, "Calvin: my studio flooded", 1)
    turn(api, "Dave: the desk?", 2)
    after = get(api, a["memory_id"])
    assert after["version"] == 1
    assert len(api.get(f"/memories/{a['memory_id']}/history").json()["versions"]) == 1
    # The client's optimistic lock still holds.
    assert api.patch(f"/memories/{a['memory_id']}", {"importance": 0.9, "version": 1}
                     ).status_code == 200


def test_a_given_context_is_the_clients_and_never_rebuilt(api):
    a = turn(api, "Calvin: my studio flooded", 1, context="a storm over Boston")
    assert a["context_from"] == "client"
    turn(api, "Dave: the desk?", 2)
    assert get(api, a["memory_id"])["context"] == "a storm over Boston"


def test_other_conversations_and_memories_without_one_are_not_neighbours(api):
    a = turn(api, "Calvin: my studio flooded", 1)
    turn(api, "Dave: other chat", 2, conversation="c-2")
    lone = api.post("/memories", {"user_id": "u-a", "content": "no conversation"}).json()
    assert get(api, a["memory_id"])["context"] == ""
    assert lone["context"] == "" and lone["context_from"] == ""


def test_patch_sets_context_as_a_new_version(api):
    a = turn(api, "Calvin: my studio flooded", 1)
    patched = api.patch(f"/memories/{a['memory_id']}", {"context": "storm; insurance claim",
                                                        "reason": "add what it was about"})
    assert patched.status_code == 200
    body = patched.json()
    assert body["version"] == 2 and body["context"] == "storm; insurance claim"
    assert body["context_from"] == "client"
    turn(api, "Dave: the desk?", 2)
    assert get(api, a["memory_id"])["context"] == "storm; insurance claim"
    assert recall(api, "insurance")[0]["memory_id"] == a["memory_id"]
    bad = api.patch(f"/memories/{a['memory_id']}", {"context": 5})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "context"


def test_rollback_restores_the_context_of_the_version(api_admin):
    api = api_admin
    a = turn(api, "Calvin: my studio flooded", 1, context="first words")
    api.patch(f"/memories/{a['memory_id']}", {"context": "second words"})
    back = api.post(f"/memories/{a['memory_id']}/rollback", {"version": 1, "reason": "undo"})
    assert back.status_code == 200, back.content
    assert back.json()["context"] == "first words" and back.json()["version"] == 3
    assert recall(api, "first")[0]["memory_id"] == a["memory_id"]
    assert recall(api, "second") == []


def test_rollback_of_a_server_built_context_follows_the_conversation(api_admin):
    api = api_admin
    a = turn(api, "Calvin: my studio flooded", 1)
    api.patch(f"/memories/{a['memory_id']}", {"content": "Calvin: my studio flooded badly"})
    turn(api, "Dave: the desk?", 2)
    back = api.post(f"/memories/{a['memory_id']}/rollback", {"version": 1, "reason": "undo"})
    assert back.json()["content"] == "Calvin: my studio flooded"
    assert back.json()["context"] == "Dave: the desk?"
    assert back.json()["context_from"] == "conversation"


def test_promote_copies_the_context(api):
    w = turn(api, "Calvin: keep the receipts", 1, type="working")
    turn(api, "Dave: for the insurance claim?", 2, type="working")
    promoted = api.post(f"/memories/{w['memory_id']}/promote", {})
    assert promoted.status_code == 201
    body = promoted.json()
    assert body["context"] == "Dave: for the insurance claim?"
    assert body["context_from"] == "copy" and body["conversation_id"] is None


def session_with(api, *contents):
    sid = api.post("/sessions", {"user_id": "u-a"}).json()["session_id"]
    msgs = [{"role": "user", "content": c, "at": f"2026-11-2{n}T09:00:00+00:00"}
            for n, c in enumerate(contents)]
    assert api.post(f"/sessions/{sid}/messages", {"messages": msgs}).status_code == 201
    return sid


def test_a_promoted_message_gets_the_previous_messages_and_then_the_next(api):
    sid = session_with(api, "we moved to Lisbon", "the flat has a balcony", "rent is high")
    promoted = api.post(f"/sessions/{sid}/messages/3/promote", {})
    assert promoted.status_code == 201
    body = promoted.json()
    assert body["context"] == "we moved to Lisbon\nthe flat has a balcony"
    assert body["context_from"] == "session"
    assert body["created_at"].startswith("2026-11-22T09:00:00")  # the message's time
    assert api.post(f"/sessions/{sid}/messages", {"role": "assistant",
                                                  "content": "try the Alfama district"}
                    ).status_code == 201
    after = get(api, body["memory_id"])
    assert after["context"].endswith("try the Alfama district") and after["version"] == 1
    hit = recall(api, "Alfama")
    assert [h["memory_id"] for h in hit] == [body["memory_id"]]
    assert hit[0]["explain"]["context_terms"] == ["alfama"]


def test_an_earlier_promoted_message_does_not_gain_later_messages(api):
    sid = session_with(api, "one", "two")
    first = api.post(f"/sessions/{sid}/messages/1/promote", {}).json()
    assert first["context"] == "two"
    api.post(f"/sessions/{sid}/messages", {"role": "user", "content": "three"})
    assert get(api, first["memory_id"])["context"] == "two"


def test_a_message_at_that_is_not_a_date_is_a_400_and_writes_nothing(api):
    sid = api.post("/sessions", {"user_id": "u-a"}).json()["session_id"]
    bad = api.post(f"/sessions/{sid}/messages",
                   {"messages": [{"role": "user", "content": "hi", "at": "soon"}]})
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "messages[0].at"
    assert api.get(f"/sessions/{sid}").json()["total"] == 0


# --- a purge takes its text out of the neighbours' contexts too ------------------------------

SECRET = "Erin: my bank card is ZEBRA-4471 PIN"


def holds_secret(text) -> bool:
    """Whether ``text`` (any value, as JSON) holds a word of SECRET: "zebra", or 4471 as a
    number of its own (not four digits of a timestamp or of a hex id)."""
    text = (text if isinstance(text, str) else json.dumps(text, default=str)).lower()
    return "zebra" in text or re.search(r"(?<![0-9a-f.])4471(?![0-9a-f])", text) is not None


def redis_values_with_secret() -> list[str]:
    """Every key under this run's prefix whose name or value holds SECRET's words, whatever
    its type (hot-store hashes, document vectors, postings, registries, the write stream)."""
    client = store.get_client()
    # Strings as bytes: a serving index snapshot's chunks are compressed, not text.
    read = {"string": lambda key: client.execute_command("GET", key, NEVER_DECODE=[]),
            "hash": client.hgetall, "set": client.smembers,
            "list": lambda key: client.lrange(key, 0, -1),
            "zset": lambda key: client.zrange(key, 0, -1), "stream": client.xrange}
    found = []
    for key in client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*", count=1000):
        value = read[store.text(client.type(key))](key)
        if holds_secret(store.text(key)) or holds_secret(repr(value)):
            found.append(store.text(key))
    return found


def database_rows_with_secret() -> list[str]:
    """Every row of every table (dumpdata: memories and their history, audit events, webhook
    events and deliveries, sessions...) that holds SECRET's words."""
    out = io.StringIO()
    call_command("dumpdata", exclude=["django_rq"], stdout=out)  # no tables of its own
    return [f"{row['model']} {row['pk']}" for row in json.loads(out.getvalue())
            if holds_secret(row)]


def snapshots_with_secret() -> list[str]:
    """The index fields whose serving index snapshot of u-a in Redis holds SECRET's words
    (its terms or memory ids, read back whole: its chunks are compressed)."""
    client = store.get_client()
    found = []
    for field in ("c", "s", "xs"):
        index = snapshot.read(client, "u-a", field)
        if index is not None and holds_secret(sorted(index.vocab) + sorted(index.doc_of)):
            found.append(field)
    return found


def snapshots_saved() -> int:
    return sum(snapshot.describe(store.get_client(), "u-a", f) is not None
               for f in ("c", "s", "xs"))


def build_snapshots(monkeypatch):
    """Save each index field's serving index of u-a in Redis (a background build each, as
    in a new process)."""
    serving_feed.clear()
    monkeypatch.setattr(serving_feed, "SYNC_BUILD_DOCS", 2)
    for profile in ("bm25", "stemmed", "context"):
        memory_search(user_id="u-a", query="card", profile=profile)
    for served in list(serving_feed._registry.values()):
        if served.thread is not None:
            served.thread.join(30)


def test_a_purge_leaves_no_copy_of_the_text_in_its_neighbours_or_anywhere(
        api_admin, settings, monkeypatch, empty_queues):
    api = api_admin
    settings.WEBHOOKS_ALLOW_PRIVATE = True  # an endpoint on loopback; nothing is delivered
    hook = api.post("/webhooks", {"url": "http://127.0.0.1:9/hook",
                                  "events": ["memory.created", "memory.updated",
                                             "memory.purged"]})
    assert hook.status_code == 201
    a = turn(api, "Dave: how was the bank?", 1)
    b = turn(api, "Erin: they sent a new card", 2)
    s = turn(api, SECRET, 3)
    d = turn(api, "Dave: write it down somewhere safe", 4)
    e = turn(api, "Erin: it is in my notebook", 5)
    # d's second version keeps the context it had then (with the secret) in its history.
    api.patch(f"/memories/{d['memory_id']}", {"importance": 0.9, "reason": "matters"})
    build_snapshots(monkeypatch)
    assert snapshots_with_secret() and redis_values_with_secret()
    assert s["memory_id"] in {m["memory_id"] for m in recall(api, "ZEBRA-4471 PIN")}

    assert api.delete(f"/memories/{s['memory_id']}?purge=1").status_code == 204

    # The neighbours hold the context the conversation gives them without it.
    assert get(api, b["memory_id"])["context"] == "Dave: how was the bank?\n" + d["content"]
    assert get(api, d["memory_id"])["context"] == "\n".join(
        [a["content"], b["content"], e["content"]])
    assert get(api, e["memory_id"])["context"] == b["content"] + "\n" + d["content"]
    assert database_rows_with_secret() == []
    assert not holds_secret(export_memories(user_id="u-a"))
    assert redis_values_with_secret() == []
    assert snapshots_with_secret() == [] and snapshots_saved() == 0
    for profile in ("bm25", "stemmed", "context"):
        assert api.post("/recall", {"user_id": "u-a", "query": "ZEBRA-4471 PIN",
                                    "profile": profile}).json()["results"] == []
    build_snapshots(monkeypatch)  # saved again after the purge
    assert snapshots_saved() == 3 and snapshots_with_secret() == []
    # The neighbours' versions are kept (their copies of the text redacted), and said so.
    assert len(api.get(f"/memories/{d['memory_id']}/history").json()["versions"]) == 2
    redacted = {e.target: e.data for e in AuditEvent.objects.filter(action="redact")}
    assert redacted == {m["memory_id"]: {"user_id": "u-a", "purged": [s["memory_id"]],
                                         "versions": versions}
                        for m, versions in ((d, [1, 2]), (e, [1]))}


def test_a_purge_redacts_the_copies_of_a_forgotten_turn_and_of_a_promoted_one(api_admin):
    api = api_admin
    a = turn(api, "Dave: how was the bank?", 1)
    s = turn(api, SECRET, 2)
    b = turn(api, "Erin: I wrote it down", 3)
    c = turn(api, "Dave: good", 4)
    promoted = api.post(f"/memories/{b['memory_id']}/promote", {}).json()
    assert promoted["context_from"] == "copy" and holds_secret(promoted["context"])
    assert api.delete(f"/memories/{c['memory_id']}").status_code == 204  # keeps its context

    assert api.delete(f"/memories/{s['memory_id']}?purge=1").status_code == 204

    # The copy and the forgotten turn lose the purged line; the live turns are rebuilt.
    assert get(api, promoted["memory_id"])["context"] == a["content"] + "\n" + c["content"]
    assert get(api, c["memory_id"])["context"] == b["content"]
    assert get(api, b["memory_id"])["context"] == a["content"]
    assert get(api, a["memory_id"])["context"] == b["content"]
    assert database_rows_with_secret() == [] and redis_values_with_secret() == []
    assert recall(api, "ZEBRA-4471 PIN") == []
    redacted = {e.target: e.data["versions"] for e in AuditEvent.objects.filter(action="redact")}
    assert redacted == {promoted["memory_id"]: [1], b["memory_id"]: [1], c["memory_id"]: [1, 2]}
    purge = AuditEvent.objects.get(action="purge")
    assert purge.data["redacted"] == sorted(redacted) and not holds_secret(purge.data)


def test_a_replace_import_leaves_no_serving_snapshot_of_the_replaced_text(
        api_admin, monkeypatch):
    for n, content in enumerate([SECRET, "Dave: noted", "Erin: thanks", "Dave: bye"]):
        turn(api_admin, content, n)
    build_snapshots(monkeypatch)
    assert snapshots_with_secret()
    doc = {"schema_version": 2, "user_id": "u-a",
           "memories": [{"user_id": "u-a", "content": "a new start"}]}
    assert api_admin.call("post", "/import?mode=replace", doc).status_code == 200
    assert snapshots_with_secret() == []
    assert database_rows_with_secret() == [] and redis_values_with_secret() == []
