"""The serving index against the real Redis and database: read-your-writes from a second OS
process, incremental == rebuild, no stale df after deletes, expiry before scoring (issue 13),
rebuilds after a reindex swap, a trimmed stream or a flush, the format stamp, the budget."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from memories import queue as job_queue
from memories import services, store
from memories.models import Memory
from operations.reindex import reindex_namespace
from search import scoring
from search.index import fields as index_fields
from search.index import postings
from search.memory_search import memory_search
from search.serving import feed as serving
from tests.conftest import work
from tests.helpers import create, oracle_scores

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent

# A second process: Django on the same database and Redis prefix, answering one JSON line
# per command from stdin ("search QUERY" -> ids and scores; "create TEXT" -> the new id).
CHILD = r"""
import json, sys
import django
django.setup()
from memories import services
from search.models import RankingProfile
from search.memory_search import memory_search
bm25 = RankingProfile(name="bm25")  # unsaved: the child never needs the profile table
for line in sys.stdin:
    cmd, _, arg = line.rstrip("\n").partition(" ")
    if cmd == "search":
        found = memory_search(user_id="u-a", query=arg, limit=50, profile=bm25)
        print(json.dumps({h.memory_id: h.score for h in found.results}), flush=True)
    elif cmd == "create":
        print(json.dumps(services.memory_create(user_id="u-a", content=arg)[0].memory_id),
              flush=True)
"""


def _database_url() -> str:
    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    return (f"postgres://{s['USER']}:{s.get('PASSWORD') or ''}@{s['HOST'] or '127.0.0.1'}:"
            f"{s['PORT'] or 5432}/{s['NAME']}")


@pytest.fixture
def child():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memory_console.settings", "DEBUG": "1",
           "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
           "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX}
    proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(line: str):
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    yield ask
    proc.stdin.close()
    proc.wait(timeout=30)


def scores(query, user_id="u-a", **kw):
    found = memory_search(user_id=user_id, query=query, limit=100, profile="bm25", **kw)
    return {h.memory_id: h.score for h in found.results}, found


def assert_oracle(query, user_id="u-a"):
    got, _ = scores(query, user_id)
    want = oracle_scores(user_id, query)
    assert got.keys() == want.keys(), query
    for memory_id, value in want.items():
        assert got[memory_id] == pytest.approx(value, abs=1e-9)


@pytest.mark.django_db(transaction=True)  # a real commit: another process reads the rows
def test_a_process_with_a_warm_index_finds_another_process_write_at_once(builtins, child):
    for n in range(30):
        create(f"kestrel note {n}")
    assert len(child("search kestrel")) == 30  # the child's index is built and warm
    mine = create("kestrel osprey sighting").memory_id
    got = child("search osprey")  # no wait: the write returned, so the child must see it
    assert list(got) == [mine]
    services.memory_forget(memory_id=mine)
    assert child("search osprey") == {}
    assert len(child("search kestrel")) == 30


@pytest.mark.django_db(transaction=True)  # a real commit: another process reads the rows
def test_this_process_finds_a_write_made_by_another_process(builtins, child):
    for n in range(20):
        create(f"heron note {n}")
    assert len(scores("heron")[0]) == 20  # warm here
    theirs = child("create heron egret nest")
    got, found = scores("egret")
    assert list(got) == [theirs] and found.n_docs == 21
    assert_oracle("heron egret")


def test_no_stale_df_or_n_after_deletes(builtins):
    ids = [create(f"redis cache {n}").memory_id for n in range(10)]
    create("redis cluster")
    assert scores("redis")[1].df == {"redis": 11}
    for memory_id in ids[:6]:
        services.memory_forget(memory_id=memory_id)
    _, found = scores("redis cache")
    assert found.df == {"redis": 5, "cache": 4} and found.n_docs == 5
    assert_oracle("redis cache")


def test_incremental_equals_a_rebuild_to_1e9(builtins):
    live = [create(f"alpha beta {n} " + "gamma " * (n % 4)).memory_id for n in range(40)]
    scores("alpha")  # warm, then change under it
    for n, memory_id in enumerate(live[:25]):
        if n % 3 == 0:
            services.memory_forget(memory_id=memory_id)
        else:
            services.memory_update(memory_id=memory_id, content=f"gamma delta {n} alpha")
    queries = ["alpha", "gamma delta", "beta gamma alpha"]
    incremental = [scores(q)[0] for q in queries]
    serving.clear()
    rebuilt = [scores(q)[0] for q in queries]
    for a, b in zip(incremental, rebuilt, strict=True):
        assert a.keys() == b.keys()
        for memory_id, value in b.items():
            assert a[memory_id] == pytest.approx(value, abs=1e-9)
    for q in queries:
        assert_oracle(q)


def _entries_after(redis_client, last: str) -> list[dict]:
    return [{store.text(k): store.text(v) for k, v in fields.items()}
            for _, fields in redis_client.xrange(store.key("u-a", "stream"), min="(" + last)]


def test_a_write_lists_the_field_documents_it_changed_and_other_fields_read_past_it(
        builtins, redis_client):
    """Each stream entry of an upsert lists the field documents the write changed (terms,
    length, filter fields): the next turn of a conversation extends the turn before's context
    field alone, an importance change none, a type change every one. A serving index reads
    only the memories whose document of its own field changed, and stays equal to a
    rebuild."""
    from memories.services import change

    first = create("ferry timetable for the harbour", conversation_id="c-1").memory_id
    create("the ferry leaves at noon", conversation_id="c-1")
    scores("ferry")
    memory_search(user_id="u-a", query="ferry harbour")  # the default: the context field
    top = store.text(redis_client.xinfo_stream(store.key("u-a", "stream"))["last-generated-id"])
    applied = serving.counters.applied
    third = create("a harbour cafe opens near the ferry", conversation_id="c-1").memory_id
    entries = _entries_after(redis_client, top)
    by_id = {e["id"]: e["f"] for e in entries}
    assert set(by_id[third].split(",")) == {index_fields.CONTENT, index_fields.CONTENT_STEMMED,
                                           index_fields.WITH_CONTEXT_STEMMED}
    second = next(m for m in by_id if m != third)  # the turn before: its context grew
    assert by_id[second] == index_fields.WITH_CONTEXT_STEMMED
    scores("ferry")  # the content field reads the new memory only
    assert serving.counters.applied == applied + 1
    memory_search(user_id="u-a", query="ferry harbour")  # the context field: both
    assert serving.counters.applied == applied + 3
    top = store.text(redis_client.xinfo_stream(store.key("u-a", "stream"))["last-generated-id"])
    change.memory_update(memory_id=first, importance=0.9)
    change.memory_update(memory_id=second, type="working")
    later = {e["id"]: e.get("f") for e in _entries_after(redis_client, top)}
    assert later[first] == "" and len(later[second].split(",")) == 3
    queries = ["ferry", "harbour cafe", "ferry harbour noon"]
    incremental = [(scores(q)[0], memory_search(user_id="u-a", query=q, limit=10).results)
                   for q in queries]
    serving.clear()
    for (content, context), q in zip(incremental, queries, strict=True):
        again = scores(q)[0]
        assert content.keys() == again.keys()
        for memory_id, value in again.items():
            assert content[memory_id] == pytest.approx(value, abs=1e-9)
        rebuilt = memory_search(user_id="u-a", query=q, limit=10).results
        assert [(h.memory_id, h.explain.bm25, h.type) for h in context] == [
            (h.memory_id, pytest.approx(h.explain.bm25, abs=1e-9), h.type) for h in rebuilt]


def test_expired_memories_leave_the_statistics_before_scoring(builtins):
    """Issue 13: the first recall after an expiry scores with N, df and avgdl that no longer
    count the expired memories (what a rebuild gives), and the second recall agrees."""
    for n in range(6):
        create(f"deploy checklist step {n}")
    create("deploy deploy deploy rollback plan")
    for n in range(4):
        create(f"deploy freeze {n}", type="short_term", ttl_seconds=60)
    later = time.time() + 120
    first = scores("deploy rollback", now=later)
    second = scores("deploy rollback", now=later)
    live = Memory.objects.filter(user_id="u-a", expire_at__isnull=True)
    assert first[1].n_docs == live.count() and first[1].df["deploy"] == live.count()
    # What a rebuild gives: BM25 over the memories that have not expired.
    analyzer = index_fields.ANALYZERS[index_fields.CONTENT]
    docs = {m.memory_id: analyzer.term_frequencies(m.content) for m in live}
    total = sum(sum(tf.values()) for tf in docs.values())
    terms = analyzer.tokens("deploy rollback")
    df = {t: sum(1 for tf in docs.values() if t in tf) for t in terms}
    want = {m: scoring.bm25(terms, tf, sum(tf.values()), len(docs), df, total / len(docs))
            for m, tf in docs.items()}
    for got in (first[0], second[0]):
        assert got.keys() == want.keys()
        for memory_id, value in want.items():
            assert got[memory_id] == pytest.approx(value, abs=1e-9)


def test_a_reindex_swap_rebuilds_the_serving_index(builtins):
    for n in range(15):
        create(f"lighthouse keeper {n}")
    scores("lighthouse")
    builds = serving.counters.builds
    reindex_namespace("u-a")
    create("lighthouse lamp")
    assert_oracle("lighthouse lamp")
    assert serving.counters.builds == builds + 1


def test_statistics_off_by_a_fault_rebuild_the_serving_index_once_not_at_every_recall(
        builtins, redis_client):
    """A statistics hash that differs from its documents (a fault reconcile repairs) is
    served as its documents say after one rebuild; the next recalls build nothing, and a
    new difference (the repair) is noticed."""
    for n in range(12):
        create(f"harbour crane {n}")
    scores("harbour")
    stats_key = store.key("u-a", postings.live_field(redis_client, "u-a", "c"), "stats")
    redis_client.hincrby(stats_key, "N", -2)
    builds = serving.counters.builds
    for _ in range(5):
        assert len(scores("harbour")[0]) == 12
    assert serving.counters.builds == builds + 1
    redis_client.hincrby(stats_key, "N", 2)  # repaired
    create("harbour pilot")
    assert_oracle("harbour crane")
    assert serving.counters.builds == builds + 2


def test_a_trimmed_stream_or_a_flush_forces_a_rebuild(builtins, redis_client):
    for n in range(12):
        create(f"glacier survey {n}")
    scores("glacier")
    builds = serving.counters.builds
    later = create("glacier crevasse").memory_id
    redis_client.xtrim(store.key("u-a", "stream"), maxlen=0)  # our position is gone
    assert "glacier" and later in scores("crevasse")[0]
    assert serving.counters.builds == builds + 1
    assert_oracle("glacier crevasse")
    for key in redis_client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*"):
        redis_client.delete(key)
    reindex_namespace("u-a")
    assert_oracle("glacier crevasse")


def test_a_stream_recreated_with_as_many_entries_as_were_applied_forces_a_rebuild(
        builtins, redis_client):
    """A flushed namespace written again until its new stream counts as many entries as the
    index applied of the old one, with later ids: not a continuation of the old stream (the
    entries read after our position and the count no longer add up), so the index is
    rebuilt and its position is the new stream's. The old index held no document, so its N
    could not tell; taken as a continuation, it counted one entry more than the stream and
    a lean window, asking what was written between its two reads, served nothing."""
    emoji, _ = services.memory_create(user_id="u-a", content="🙂🙂")  # no term: N stays 0
    # Forgotten before the flush: the database holds nothing the new writes lack, so the
    # namespace is whole again after them (search.index_lost lets it be served).
    services.memory_forget(memory_id=emoji.memory_id)
    memory_search(user_id="u-a", query="hello")  # the default profile: a lean window
    key = (store.namespace_base("u-a"), index_fields.WITH_CONTEXT_STEMMED)
    served = serving._registry[key]
    applied = served.added
    for k in redis_client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*"):
        redis_client.delete(k)
    made = [create(f"harbour ferry {n}").memory_id for n in range(applied)]
    builds = serving.counters.builds
    found = memory_search(user_id="u-a", query="harbour", limit=10)
    assert {h.memory_id for h in found.results} == set(made)
    assert serving.counters.builds == builds + 1
    info = redis_client.xinfo_stream(store.key("u-a", "stream"))
    assert served.added == info["entries-added"]


def test_an_unknown_format_stamp_is_refused_and_an_older_one_served(builtins, redis_client):
    """A format this code does not know (a newer version wrote it) is no index to answer
    from: the recall raises, never answers from a layout it cannot read. An older one is
    served while a reindex upgrades it."""
    for n in range(8):
        create(f"orchard apple {n}")
    redis_client.set(store.key("u-a", "format"), "99")
    with pytest.raises(serving.Unsupported):
        scores("orchard apple")
    redis_client.delete(store.key("u-a", "format"))  # absent: format "1"
    assert_oracle("orchard apple")


def test_a_tiny_budget_evicts_other_namespaces_and_answers_stay_exact(builtins, settings):
    settings.MEMORY_SERVING_BUDGET_MB = 0
    for ns in ("n-1", "n-2", "n-3"):
        for n in range(5):
            create(f"{ns} walrus {n}", user_id=ns)
    for _ in range(2):
        for ns in ("n-1", "n-2", "n-3"):
            assert_oracle("walrus", user_id=ns)
    assert serving.counters.evictions > 0


def test_a_recall_costs_the_same_however_many_namespaces_the_process_holds(builtins,
                                                                           monkeypatch):
    """The budget check counts the index just built or caught up, not every index held (it
    summed them all: with 1,000 small namespaces held, each first recall of another one
    spent 15 ms on it), and its running total follows what is held."""
    from search.serving.engine import FieldIndex

    for n in range(31):
        create(f"tenant {n} keeps a walrus", user_id=f"t-{n}")
    for n in range(30):
        memory_search(user_id=f"t-{n}", query="walrus", profile="bm25")
    calls = {"n": 0}
    real = FieldIndex.nbytes

    def counted(self):
        calls["n"] += 1
        return real(self)

    monkeypatch.setattr(FieldIndex, "nbytes", counted)
    assert memory_search(user_id="t-30", query="walrus", profile="bm25").results  # built now
    assert calls["n"] <= 2, f"{calls['n']} indexes measured for one recall"
    create("another walrus", user_id="t-3")
    calls["n"] = 0
    assert len(memory_search(user_id="t-3", query="walrus", profile="bm25").results) == 2
    assert calls["n"] <= 2  # the index that grew through the stream is counted again
    monkeypatch.setattr(FieldIndex, "nbytes", real)
    with serving._registry_lock:
        held = sum(s.index.nbytes() for s in serving._registry.values() if s.index is not None)
    # As of each index's last count: its first search's work arrays come after it (bytes).
    assert 0 < held - serving.held_bytes() <= 0.02 * held


@pytest.fixture
def slow_build(monkeypatch):
    """Namespaces of more than 5 memories build in the background, and each build waits for
    ``release`` (set at the end of the test) before it reads Redis."""
    import threading

    monkeypatch.setattr(serving, "SYNC_BUILD_DOCS", 5)
    release, real = threading.Event(), serving._build

    def held(*args, **kwargs):
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(serving, "_build", held)
    yield release
    release.set()
    served = serving._registry.get((store.namespace_base("u-a"), "c"))
    if served is not None and served.thread is not None:
        served.thread.join(30)


def test_a_large_namespace_first_recall_waits_for_its_background_build(builtins, slow_build,
                                                                       settings):
    """The recall waits (within MEMORY_SERVING_WAIT_SECONDS) for the index this process
    builds on a thread, and answers from it, exactly."""
    import threading

    settings.MEMORY_SERVING_WAIT_SECONDS = 30
    for n in range(12):
        create(f"meadow lark {n}")
    builds = serving.counters.builds
    started = time.monotonic()
    threading.Timer(0.3, slow_build.set).start()
    assert_oracle("meadow lark")
    assert time.monotonic() - started >= 0.3  # it waited for the build
    assert serving.counters.builds == builds + 1
    served = serving._registry[(store.namespace_base("u-a"), "c")]
    create("meadow pipit")  # after the build: reached through the stream
    assert_oracle("meadow lark pipit")
    assert served.index is not None and served.index.n_live == 13


def test_a_build_past_the_wait_answers_503_with_retry_after(builtins, slow_build, settings,
                                                            api):
    """Past MEMORY_SERVING_WAIT_SECONDS the recall is refused as a rebuild is (503,
    Retry-After, a JSON error), never answered empty; once built, it answers."""
    settings.MEMORY_SERVING_WAIT_SECONDS = 0.2
    for n in range(12):
        create(f"meadow lark {n}")
    refused = api.post("/recall", {"user_id": "u-a", "query": "meadow lark"})
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "index_rebuilding"
    assert "being loaded" in refused.json()["error"]["message"]
    assert int(refused["Retry-After"]) > 0
    slow_build.set()
    settings.MEMORY_SERVING_WAIT_SECONDS = 30
    answered = api.post("/recall", {"user_id": "u-a", "query": "meadow lark", "limit": 20})
    assert answered.status_code == 200 and len(answered.json()["results"]) == 12


def test_a_new_namespace_is_stamped_with_the_current_format(builtins, redis_client):
    create("first memory")  # "new:" until a recall checked it (search.index_lost)
    memory_search(user_id="u-a", query="first memory", limit=5, profile="bm25")
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_an_index_of_an_older_format_upgrades_itself(builtins, redis_client, empty_queues):
    for n in range(10):
        create(f"harbour pilot {n}")
    redis_client.delete(store.key("u-a", "format"))  # as an index built before the stamp
    assert_oracle("harbour pilot")  # still served meanwhile
    assert_oracle("harbour")  # noticed once: one job, not one per recall
    assert job_queue.get_queue("index").count == 1
    work()
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT
    assert store.text(redis_client.get(store.key("u-a", "gen"))) == "1"
    assert_oracle("harbour pilot")


def test_an_unchanged_namespace_is_answered_in_one_round_trip_and_a_write_is_seen(builtins):
    for n in range(8):
        create(f"quarry stone {n}")
    scores("quarry")  # built and checked
    fast = serving.counters.fast
    found = memory_search(user_id="u-a", query="quarry stone", limit=3, profile="bm25")
    assert serving.counters.fast == fast + 1 and len(found.results) == 3
    assert all(h.content.startswith("quarry stone") for h in found.results)
    new = create("quarry granite").memory_id
    applied = serving.counters.applied
    # The check sees the write and brings it along: applied, searched again, not stale.
    got, _ = scores("granite")
    assert list(got) == [new] and serving.counters.fast == fast + 2
    assert serving.counters.applied == applied + 1
    assert_oracle("quarry granite")


def test_a_write_seen_by_the_check_is_answered_from_that_reply_when_the_hits_stay(builtins):
    """The check that brings a write also brought the hits' hashes: applied, searched again,
    and when the new top k is among the old hits it is answered with no second check, with
    the live statistics (the write counts in N and df) and the hits left to the caller to
    count (the script counts only when it read no write)."""
    for n in range(8):
        create(f"quarry stone {n}")
    scores("quarry")  # built and checked
    memory_search(user_id="u-a", query="quarry stone", limit=3, profile="bm25")
    create("quarry granite")  # matches one term: the top 3 of "quarry stone" stays
    fast, caught = serving.counters.fast, serving.counters.caught
    found = memory_search(user_id="u-a", query="quarry stone", limit=3, profile="bm25",
                          count_hits=True)
    assert serving.counters.caught == caught + 1 and serving.counters.fast == fast
    assert found.n_docs == 9 and found.df == {"quarry": 9, "stone": 8}
    assert not found.hits_counted
    want = oracle_scores("u-a", "quarry stone")
    assert len(found.results) == 3
    for h in found.results:
        assert h.score == pytest.approx(want[h.memory_id], abs=1e-9)
        assert h.content == Memory.objects.get(pk=h.memory_id).content


def test_a_write_that_changes_the_hits_is_checked_again(builtins):
    """New hits whose hashes the reply did not bring: searched and checked once more."""
    for n in range(8):
        create(f"quarry stone {n}")
    memory_search(user_id="u-a", query="quarry stone", limit=3, profile="bm25")
    new = create("quarry stone stone quarry").memory_id  # the best match now
    fast, caught = serving.counters.fast, serving.counters.caught
    found = memory_search(user_id="u-a", query="quarry stone", limit=3, profile="bm25",
                          count_hits=True)
    assert found.results[0].memory_id == new and found.hits_counted
    assert serving.counters.caught == caught and serving.counters.fast == fast + 1


def test_a_catch_up_of_long_documents_is_read_in_bounded_replies(builtins):
    """feed.lua stops after about MAX_FIELDS fields of documents (the work of one call is
    entries x postings, never more than ~1 ms of Redis): the caller asks again from the
    last entry it applied, and the index equals the oracle after the last reply."""
    create("orchard apple")
    scores("orchard")  # built and checked: later writes come through the stream
    long_ids = [create(f"orchard {n} " + " ".join(f"w{n}x{j}" for j in range(120))).memory_id
                for n in range(12)]
    served = serving.entry("u-a", index_fields.CONTENT)
    reply = serving.feed_reply(store.get_client(), "u-a", index_fields.CONTENT, served.last_id,
                               serving.FEED_COUNT)
    assert 1 <= len(reply["read"]) < len(long_ids)  # 12 documents of 122 terms: bounded
    got, _ = scores("orchard")
    assert set(long_ids) <= got.keys()
    assert_oracle("orchard w3x7")


def test_the_database_check_runs_while_redis_answers_the_freshness_check(builtins,
                                                                          monkeypatch):
    """The hits' database check (search.pending.row_flags) is made between sending the
    freshness check and reading its reply, once per recall, and the answer is the one a
    check made after the reply gives (a pending row still served as the database holds it)."""
    from search import memory_search as memory_search_module

    made = [create(f"quarry stone {n}") for n in range(8)]
    scores("quarry")  # built and checked
    from search.serving import overlapped as overlapped_module

    real_flags, events = memory_search_module.row_flags, []
    real_send = overlapped_module.call

    def flags(ids):
        events.append(("flags", len(ids)))
        return real_flags(ids)

    def overlapped(client, script, keys, args, meanwhile):
        events.append(("sent",))
        got = real_send(client, script, keys, args, meanwhile)
        events.append(("read",))
        return got

    monkeypatch.setattr(memory_search_module, "row_flags", flags)
    monkeypatch.setattr(overlapped_module, "call", overlapped)
    Memory.objects.filter(pk=made[0].memory_id).update(content="quarry stone moved",
                                                       needs_resync=True)
    found = memory_search(user_id="u-a", query="quarry stone", limit=8, profile="bm25")
    assert events == [("sent",), ("flags", 8), ("read",)]
    held = {h.memory_id: h.content for h in found.results}
    assert held[made[0].memory_id] == "quarry stone moved" and len(held) == 8


def test_an_overlapped_check_gives_the_plain_reply_and_leaves_its_connection_clean(
        builtins, redis_client):
    """feed_reply with ``meanwhile``: the same reply as the plain call; a script Redis lost
    (SCRIPT FLUSH) is loaded and ``meanwhile`` runs once; an error of ``meanwhile`` leaves no
    reply unread on a pooled connection (the next command gets its own answer)."""
    ids = [create(f"quarry stone {n}").memory_id for n in range(3)]
    client = store.get_client()
    plain = serving.feed_reply(client, "u-a", index_fields.CONTENT, "0-0", 0, ids)
    calls = []
    got = serving.feed_reply(client, "u-a", index_fields.CONTENT, "0-0", 0, ids,
                             meanwhile=lambda: calls.append(1) or "side")
    assert got.pop("meanwhile") == "side" and plain.pop("meanwhile") is None
    assert got == plain and calls == [1]
    for node_client in ([client.get_redis_connection(n) for n in client.get_primaries()]
                        if store.is_cluster(client) else [client]):
        node_client.script_flush()
    again = serving.feed_reply(client, "u-a", index_fields.CONTENT, "0-0", 0, ids,
                               meanwhile=lambda: calls.append(2))
    again.pop("meanwhile")
    assert again == plain and calls == [1, 2]

    def fails():
        raise RuntimeError("database gone")

    key = store.key("u-a", "probe")
    client.set(key, "mine")
    for _ in range(3):
        with pytest.raises(RuntimeError):
            serving.feed_reply(client, "u-a", index_fields.CONTENT, "0-0", 0, ids,
                               meanwhile=fails)
        assert store.text(client.get(key)) == "mine"


def test_a_build_reads_its_records_in_several_mgets(builtins, monkeypatch):
    """A chunk of ids is read in MGETs of ``MGET_KEYS`` records (no long command): the
    index built from them is the oracle's, whatever the cut."""
    monkeypatch.setattr(serving, "MGET_KEYS", 3)
    monkeypatch.setattr(serving, "BUILD_CHUNK", 7)
    for n in range(17):
        create(f"lantern harbour {n} " + "tide " * (n % 3))
    serving.clear()
    assert_oracle("lantern tide")


def test_a_new_stamp_found_whole_while_redis_was_full_is_served_for_a_moment_only(
        monkeypatch):
    """``settled_whole`` lets this process serve a ``new:`` stamp Redis could not rewrite,
    for ``SETTLED_SECONDS``: a namespace Redis lost again meanwhile is checked again."""
    serving.settled_whole("u-x", "new:7")
    assert serving._served("u-x", "new:7") and not serving._served("u-y", "new:7")
    monkeypatch.setattr(serving.time, "monotonic", lambda: 1e12)
    assert not serving._served("u-x", "new:7")
