"""A large namespace's serving index saved in Redis (search/serving/snapshot.py) after its
background build is loaded by the next process, on any host, instead of built, caught up
from the stream, and refused whenever it cannot be proved to describe the live index; a
purge leaves no snapshot holding the purged text."""

import json
import time

import numpy as np
import pytest

from memories import services, store
from operations import jobs
from operations.reindex import reindex_namespace
from search.memory_search import memory_search
from search.serving import feed as serving
from search.serving import snapshot, snapshot_codec, snapshot_refresh
from search.serving.engine import Doc, FieldIndex
from tests.helpers import create, oracle_scores

pytestmark = pytest.mark.django_db

KEY = ("u-a", "c")


@pytest.fixture
def large(monkeypatch):
    """Namespaces of more than 5 memories build in the background (and save a snapshot)."""
    monkeypatch.setattr(serving, "SYNC_BUILD_DOCS", 5)
    yield
    _join_build()  # a build a test started ends within it, not in the next one


def _built() -> serving.Served:
    """Recall until this process's index of u-a's content field is built (background)."""
    memory_search(user_id="u-a", query="warm", profile="bm25")
    served = serving._registry[(store.namespace_base("u-a"), "c")]
    deadline = time.monotonic() + 30
    while (served.index is None or served.thread is not None) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.index is not None
    return served


def _join_build() -> None:
    """Wait for this process's background builds of u-a, if any runs."""
    for field_name in ("c", "s", "xs"):
        served = serving._registry.get((store.namespace_base("u-a"), field_name))
        if served is not None and served.thread is not None:
            served.thread.join(30)


def _exact(query: str):
    found = memory_search(user_id="u-a", query=query, limit=100, profile="bm25")
    got = {h.memory_id: h.score for h in found.results}
    assert got == pytest.approx(oracle_scores("u-a", query), abs=1e-9)
    assert got


def _refused(redis_client) -> None:
    """A new process finds no snapshot it may load: it builds (in the background)."""
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads
    _join_build()


def _chunks(redis_client, meta: dict) -> list[str]:
    return snapshot._chunk_keys("u-a", "c", meta["token"], meta["chunks"])


def test_the_next_process_loads_the_index_and_catches_it_up(builtins, large):
    ids = [create(f"orchard apple {n}").memory_id for n in range(12)]
    _built()
    assert snapshot.describe(store.get_client(), *KEY)["docs"] == 12
    services.memory_forget(memory_id=ids[0])  # written after the snapshot
    create("orchard pear blossom")
    builds, loads = serving.counters.builds, serving.counters.loads
    serving.clear()  # a new process, on this host or another: nothing held
    _exact("orchard pear apple")
    assert serving.counters.loads == loads + 1 and serving.counters.builds == builds


def test_a_snapshot_from_before_a_reindex_is_not_loaded(builtins, large, redis_client):
    for n in range(12):
        create(f"canal lock {n}")
    _built()
    reindex_namespace("u-a")  # a new generation: the snapshot describes the old one
    _refused(redis_client)
    _exact("canal lock")


def test_a_stream_trimmed_past_the_snapshot_is_not_loaded(builtins, large, redis_client):
    for n in range(12):
        create(f"glacier ice {n}")
    _built()
    create("glacier melt")
    redis_client.xtrim(store.key("u-a", "stream"), maxlen=0)  # its entry is gone
    _refused(redis_client)


def test_a_snapshot_whose_counts_differ_from_redis_is_rebuilt(builtins, large, redis_client):
    for n in range(12):
        create(f"prairie wind {n}")
    served = _built()
    # A snapshot one document short of the live index, at the same stream position (the
    # one in place is as new: dropped first).
    snapshot.discard("u-a")
    index = FieldIndex([Doc(f"mem_{n:016d}", 2, {"prairie": 1, "wind": 1}) for n in range(11)])
    assert snapshot.save(redis_client, "u-a", "c", index, gen=served.gen, format=served.format,
                         last_id=served.last_id, added=served.added,
                         purge_count=snapshot.purges(redis_client, "u-a"))
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):  # loaded, found short, built from Redis instead
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads + 1
    _exact("prairie wind")


def _damage(redis_client, how: str) -> None:
    meta_key = snapshot._meta_key(*KEY)
    meta = json.loads(redis_client.get(meta_key))
    first = _chunks(redis_client, meta)[0]
    if how == "chunk missing":
        redis_client.delete(first)
    elif how == "chunk garbage":
        redis_client.set(first, b"not a snapshot")
    elif how == "chunk flipped":  # same length: only the checksum tells
        raw = bytearray(redis_client.execute_command("GET", first, NEVER_DECODE=[]))
        raw[len(raw) // 2] ^= 0xFF
        redis_client.set(first, bytes(raw))
    elif how == "sections inconsistent":  # checksum right, arrays that do not fit
        meta["sections"][0][2] += 1  # one term more than the postings hold
        redis_client.set(meta_key, json.dumps(meta))
    else:
        redis_client.set(meta_key, "{not json")


@pytest.mark.parametrize("how", ["chunk missing", "chunk garbage", "chunk flipped",
                                 "sections inconsistent", "meta not json"])
def test_a_damaged_snapshot_is_built_instead_logged_and_deleted(builtins, large, redis_client,
                                                                caplog, how):
    for n in range(12):
        create(f"harbour crane {n}")
    _built()
    _damage(redis_client, how)
    _refused(redis_client)
    assert "snapshot of u-a/c ignored and removed" in caplog.text
    # The next process builds (and saves) instead of failing again: the build this one ran
    # saved a sound snapshot in its place, which loads.
    assert snapshot.describe(redis_client, *KEY)["docs"] == 12
    loads = serving.counters.loads
    serving.clear()
    _exact("harbour crane")
    assert serving.counters.loads == loads + 1


def test_a_snapshot_far_behind_the_stream_or_of_another_stream_is_not_loaded(
        builtins, large, redis_client, monkeypatch):
    for n in range(12):
        create(f"tundra moss {n}")
    _built()
    meta_key = snapshot._meta_key(*KEY)
    saved = redis_client.get(meta_key)
    monkeypatch.setattr(snapshot, "MAX_BEHIND", 2)
    for n in range(3):  # three entries after it: more than MAX_BEHIND
        create(f"tundra lichen {n}")
    _refused(redis_client)  # (its build saves a newer snapshot: the old one put back below)
    monkeypatch.setattr(snapshot, "MAX_BEHIND", 2000)
    # The same entry id holding other fields (a stream recreated with that id): not ours.
    meta = json.loads(saved)
    meta["entry"] = {**meta["entry"], "id": "mem_from_elsewhere"}
    redis_client.set(meta_key, json.dumps(meta))
    _refused(redis_client)


def test_encode_decode_round_trip_to_an_equal_index_without_the_removed_terms():
    docs = [Doc(f"mem_{n:016d}", 3 + n % 4, {"alpha": 1 + n % 2, f"t{n % 5}": 2},
                type="short_term" if n % 3 else "long_term", conv=f"c{n % 2}",
                exp=1e9 + n if n % 4 == 0 else 0.0) for n in range(40)]
    index = FieldIndex(docs)
    for n in range(0, 40, 7):
        index.remove(f"mem_{n:016d}")
    index.upsert(Doc("mem_new", 5, {"alpha": 3, "beta": 300}))
    index.upsert(Doc("mem_gone", 2, {"zebra": 1, "alpha": 1}))
    index.remove("mem_gone")  # its own term stays in the index's vocabulary, not in the blob
    blob, layout = snapshot_codec.encode(index)
    assert b"zebra" not in blob and "zebra" not in json.dumps(layout)
    again = snapshot_codec.decode(blob, layout)
    assert "zebra" not in again.vocab and "zebra" in index.vocab
    assert (again.n_live, again.total_len) == (index.n_live, index.total_len)
    assert again.exp_floor == min(index.exp[d] for d in index.expiring) == 1e9 + 4
    kept = [t for t in index.vocab if t != "zebra"]
    assert np.array_equal(again.tmax, [index.tmax[index.vocab[t]] for t in kept])
    for terms, kw in ((["alpha"], {}), (["alpha", "t3", "beta"], {}),
                      (["alpha"], {"types": ["short_term"], "conversation_id": "c1"})):
        a = index.search(terms, k=50, mode="any", now=1e9 + 10, **kw)
        b = again.search(terms, k=50, mode="any", now=1e9 + 10, **kw)
        assert (a.rows, a.expired, a.df) == (b.rows, b.expired, b.df)


def test_chunks_are_bounded_and_a_newer_save_deletes_the_old_ones(builtins, large, redis_client,
                                                                  monkeypatch):
    monkeypatch.setattr(snapshot, "CHUNK_BYTES", 64)
    for n in range(12):
        create(f"lantern festival {n} river")
    _built()
    old = snapshot.describe(redis_client, *KEY)
    assert old["chunks"] > 3
    assert all(0 < redis_client.strlen(key) <= 64 for key in _chunks(redis_client, old))
    assert all(redis_client.ttl(key) == -1 for key in _chunks(redis_client, old))  # switched
    create("lantern moon")
    served, index = serving.serving_index(redis_client, "u-a", "c")
    try:
        assert snapshot.save(redis_client, "u-a", "c", index, gen=served.gen,
                             format=served.format, last_id=served.last_id, added=served.added,
                             purge_count=snapshot.purges(redis_client, "u-a"))
        # Not newer than the one in place now: refused, and its chunks dropped.
        assert not snapshot.save(redis_client, "u-a", "c", index, gen=served.gen,
                                 format=served.format, last_id=served.last_id,
                                 added=served.added,
                                 purge_count=snapshot.purges(redis_client, "u-a"))
    finally:
        served.lock.release()
    new = snapshot.describe(redis_client, *KEY)
    assert new["token"] != old["token"] and new["docs"] == 13
    assert redis_client.exists(*_chunks(redis_client, old)) == 0
    assert {store.text(m).split("/")[1] for m in redis_client.smembers(
        snapshot._registry("u-a"))} == {new["token"]}
    serving.clear()
    loads = serving.counters.loads
    _exact("lantern moon river")
    assert serving.counters.loads == loads + 1


def _snapshot_terms(redis_client) -> set[str]:
    """Every term of every field's snapshot of u-a held in Redis (read back whole)."""
    terms = set()
    for field_name in ("c", "s", "xs"):
        index = snapshot.read(redis_client, "u-a", field_name)
        terms |= set(index.vocab) if index is not None else set()
    return terms


def test_a_purge_deletes_the_snapshots_and_the_next_holds_none_of_its_terms(
        builtins, large, redis_client):
    ids = [create(f"harbour crane {n}").memory_id for n in range(12)]
    secret = create("harbour ZEBRA-4471 PIN").memory_id
    _built()
    assert "zebra" in _snapshot_terms(redis_client)
    services.memory_purge(memory_id=secret, reason="erase")
    assert snapshot.describe(redis_client, *KEY) is None
    assert redis_client.scard(snapshot._registry("u-a")) == 0
    # A process that still holds the index (the purged memory removed through the stream)
    # saves it again: without one word of the purged text.
    _refused(redis_client)
    served, index = serving.serving_index(redis_client, "u-a", "c")
    served.lock.release()
    assert snapshot.describe(redis_client, *KEY)["docs"] == 12
    assert "zebra" not in _snapshot_terms(redis_client) and "harbour" in _snapshot_terms(
        redis_client)
    assert secret not in {h.memory_id for h in memory_search(
        user_id="u-a", query="ZEBRA-4471", profile="bm25").results}
    assert ids


def test_a_save_that_a_purge_overtook_writes_nothing(builtins, large, redis_client,
                                                     monkeypatch):
    for n in range(12):
        create(f"orchard plum {n}")
    served = _built()
    before = snapshot.purges(redis_client, "u-a")
    assert snapshot.describe(redis_client, *KEY) is not None
    snapshot.purged(redis_client, "u-a")  # a purge after the build read the count
    assert snapshot.describe(redis_client, *KEY) is None  # counted, and deleted
    assert redis_client.scard(snapshot._registry("u-a")) == 0
    args = dict(gen=served.gen, format=served.format, last_id=served.last_id,
                added=served.added, purge_count=before)
    assert not snapshot.save(redis_client, "u-a", "c", served.index, **args)
    # Even past the first check (the count read again before the first chunk is written),
    # the chunk script itself refuses: a saver that dies before its switch leaves no chunk.
    monkeypatch.setattr(snapshot, "purges", lambda client, user_id: before)

    def died(raw):
        raise RuntimeError("the saver died before its switch")

    monkeypatch.setattr(snapshot, "_old", died)  # (never reached: the first chunk refused)
    assert not snapshot.save(redis_client, "u-a", "c", served.index, **args)
    assert snapshot.describe(redis_client, *KEY) is None
    assert redis_client.scard(snapshot._registry("u-a")) == 0


def test_a_snapshot_from_before_a_purge_left_in_place_is_deleted_not_loaded(
        builtins, large, redis_client):
    """A purge whose deletion failed (Redis down at that moment) left the snapshot: its
    loader finds the count moved, deletes it and builds instead."""
    for n in range(12):
        create(f"lighthouse keeper {n}")
    _built()
    redis_client.incr(store.key("u-a", "purges"))  # counted, the deletion lost
    _refused(redis_client)
    meta = snapshot.describe(redis_client, *KEY)
    assert meta is None or meta["purges"] == snapshot.purges(redis_client, "u-a")


def test_the_worker_refreshes_missing_and_stale_snapshots_of_large_namespaces(
        builtins, large, redis_client, monkeypatch):
    for n in range(12):
        create(f"copper kettle {n}")
    for n in range(3):
        create(f"small pot {n}", user_id="u-small")  # not above SYNC_BUILD_DOCS: no snapshot
    memory_search(user_id="u-small", query="pot", profile="bm25")
    _built()  # (its first recall settles the namespace's new stamp)
    snapshot.discard("u-a")
    serving.clear()
    assert snapshot.describe(redis_client, *KEY) is None
    done = jobs.snapshot_refresh_job()
    assert done["saved"] == 3 and done["namespaces"] == 1  # c, s, xs of u-a
    assert {f: snapshot.describe(redis_client, "u-a", f)["docs"]
            for f in ("c", "s", "xs")} == {"c": 12, "s": 12, "xs": 12}
    assert snapshot.describe(redis_client, "u-small", "c") is None
    assert jobs.snapshot_refresh_job()["saved"] == 0  # current: left as they are
    monkeypatch.setattr(snapshot, "MAX_BEHIND", 4)
    for n in range(3):  # more than MAX_BEHIND / 2 entries behind
        create(f"copper pan {n}")
    assert snapshot_refresh.stale(redis_client, "u-a", "c")
    assert jobs.snapshot_refresh_job()["saved"] == 3
    assert snapshot.describe(redis_client, *KEY)["docs"] == 15
    serving.clear()
    loads = serving.counters.loads
    _exact("copper pan kettle")
    assert serving.counters.loads == loads + 1


def test_a_reindex_job_saves_the_snapshots_of_the_new_generation(builtins, large, redis_client):
    for n in range(12):
        create(f"willow branch {n}")
    old = _built().gen
    jobs.reindex_job("u-a")
    metas = {f: snapshot.describe(redis_client, "u-a", f) for f in ("c", "s", "xs")}
    assert {f: (m["gen"], m["docs"]) for f, m in metas.items()} == {
        f: (metas["c"]["gen"], 12) for f in ("c", "s", "xs")}
    assert metas["c"]["gen"] != old
    serving.clear()
    loads = serving.counters.loads
    _exact("willow branch")
    assert serving.counters.loads == loads + 1
