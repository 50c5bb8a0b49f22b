"""A large namespace's serving index saved on disk after its background build is loaded by
the next process instead of built (search/serving/snapshot.py), caught up from the stream,
and refused whenever it cannot be proved to describe the live index."""

import json
import time

import numpy as np
import pytest

from memories import services, store
from operations.reindex import reindex_namespace
from search.memory_search import memory_search
from search.serving import chunked, snapshot
from search.serving import feed as serving
from search.serving.engine import Doc, FieldIndex
from tests.helpers import create, oracle_scores

pytestmark = pytest.mark.django_db

KEY = ("u-a", "c")


@pytest.fixture
def large(settings, monkeypatch, tmp_path):
    """Namespaces of more than 5 memories build in the background; snapshots in tmp_path."""
    settings.MEMORY_SERVING_SNAPSHOT_DIR = str(tmp_path)
    monkeypatch.setattr(serving, "SYNC_BUILD_DOCS", 5)
    yield tmp_path
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
    """Wait for this process's background build of u-a's content field, if one runs."""
    served = serving._registry.get((store.namespace_base("u-a"), "c"))
    if served is not None and served.thread is not None:
        served.thread.join(30)


def _exact(query: str):
    found = memory_search(user_id="u-a", query=query, limit=100, profile="bm25")
    got = {h.memory_id: h.score for h in found.results}
    assert got == pytest.approx(oracle_scores("u-a", query), abs=1e-9)
    assert got


def _new_process(monkeypatch):
    """This process as a new one would be: no index held; reads in chunks refused, so a
    recall must come from a loaded (or built) index."""
    serving.clear()

    def refuse(*args, **kwargs):
        raise AssertionError("answered from Redis's postings: the index was not loaded")

    monkeypatch.setattr(chunked, "search_field", refuse)


def test_the_next_process_loads_the_index_and_catches_it_up(builtins, large, monkeypatch):
    ids = [create(f"orchard apple {n}").memory_id for n in range(12)]
    _built()
    assert snapshot.path_for(*KEY).exists()
    services.memory_forget(memory_id=ids[0])  # written after the snapshot
    create("orchard pear blossom")
    builds, loads = serving.counters.builds, serving.counters.loads
    _new_process(monkeypatch)
    _exact("orchard pear apple")
    assert serving.counters.loads == loads + 1 and serving.counters.builds == builds


def test_a_snapshot_from_before_a_reindex_is_not_loaded(builtins, large, monkeypatch):
    for n in range(12):
        create(f"canal lock {n}")
    _built()
    reindex_namespace("u-a")  # a new generation: the snapshot describes the old one
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):
        serving.serving_index(store.get_client(), "u-a", "c")
    assert serving.counters.loads == loads
    _exact("canal lock")  # from the postings while the build runs


def test_a_stream_trimmed_past_the_snapshot_is_not_loaded(builtins, large, redis_client):
    for n in range(12):
        create(f"glacier ice {n}")
    _built()
    create("glacier melt")
    redis_client.xtrim(store.key("u-a", "stream"), maxlen=0)  # its entry is gone
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads


def test_a_snapshot_whose_counts_differ_from_redis_is_rebuilt(builtins, large, redis_client):
    for n in range(12):
        create(f"prairie wind {n}")
    served = _built()
    path = snapshot.path_for(*KEY)
    # A snapshot one document short of the live index, at the same stream position.
    index = FieldIndex([Doc(f"mem_{n:016d}", 2, {"prairie": 1, "wind": 1}) for n in range(11)])
    snapshot.save(redis_client, "u-a", "c", index, gen=served.gen, format=served.format,
                  last_id=served.last_id, added=served.added,
                  purge_count=snapshot.purges(redis_client, "u-a"))
    assert path.exists()
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):  # loaded, found short, built from Redis instead
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads + 1
    _exact("prairie wind")


@pytest.mark.parametrize("damage", ["empty", "garbage", "truncated", "inconsistent"])
def test_a_damaged_snapshot_is_ignored(builtins, large, redis_client, caplog, damage):
    for n in range(12):
        create(f"harbour crane {n}")
    _built()
    path = snapshot.path_for(*KEY)
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "garbage":
        path.write_bytes(b"not a snapshot")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:400])
    else:
        with np.load(path) as z:
            arrays = dict(z)
        arrays["indptr"] = arrays["indptr"][:-1]  # one term short
        with open(path, "wb") as f:
            np.savez(f, **arrays)
    serving.clear()
    with pytest.raises(serving.NotReady):
        serving.serving_index(redis_client, "u-a", "c")
    assert "snapshot of u-a/c ignored and removed" in caplog.text
    assert not path.exists()  # the next process builds (and saves) instead of failing again
    _exact("harbour crane")


def test_a_snapshot_far_behind_the_stream_or_of_another_stream_is_not_loaded(
        builtins, large, redis_client, monkeypatch):
    for n in range(12):
        create(f"tundra moss {n}")
    served = _built()
    path = snapshot.path_for(*KEY)
    saved = path.read_bytes()
    monkeypatch.setattr(snapshot, "MAX_BEHIND", 2)
    for n in range(3):  # three entries after it: more than MAX_BEHIND
        create(f"tundra lichen {n}")
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads
    _join_build()  # it saves a snapshot of its own when it ends: not over the file below
    # The same entry id holding other fields (another Redis, a clone): not this index.
    monkeypatch.setattr(snapshot, "MAX_BEHIND", 2000)
    path.write_bytes(saved)
    with np.load(path) as z:
        arrays = dict(z)
    meta = json.loads(bytes(arrays["meta"]))
    meta["entry"] = {**meta["entry"], "id": "mem_from_elsewhere"}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    assert served.last_id == meta["last_id"]
    serving.clear()
    with pytest.raises(serving.NotReady):
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads


def test_arrays_round_trip_to_an_equal_index():
    docs = [Doc(f"mem_{n:016d}", 3 + n % 4, {"alpha": 1 + n % 2, f"t{n % 5}": 2},
                type="short_term" if n % 3 else "long_term", conv=f"c{n % 2}",
                exp=1e9 + n if n % 4 == 0 else 0.0) for n in range(40)]
    index = FieldIndex(docs)
    for n in range(0, 40, 7):
        index.remove(f"mem_{n:016d}")
    index.upsert(Doc("mem_new", 5, {"alpha": 3, "beta": 1}))
    arrays, names = index.arrays()
    again = FieldIndex.from_arrays({k: np.array(v) for k, v in arrays.items()}, names)
    assert (again.n_live, again.total_len) == (index.n_live, index.total_len)
    # The earliest expiry of a live document (the original's floor is a bound that a
    # removal leaves as it was).
    assert again.exp_floor == min(index.exp[d] for d in index.expiring) == 1e9 + 4
    for terms, kw in ((["alpha"], {}), (["alpha", "t3", "beta"], {}),
                      (["alpha"], {"types": ["short_term"], "conversation_id": "c1"})):
        a = index.search(terms, k=50, mode="any", now=1e9 + 10, **kw)
        b = again.search(terms, k=50, mode="any", now=1e9 + 10, **kw)
        assert (a.rows, a.expired, a.df) == (b.rows, b.expired, b.df)


def test_another_hosts_snapshot_from_before_a_purge_is_removed_not_loaded(
        builtins, large, monkeypatch, redis_client):
    """A purge removes this host's snapshots; another host's copy (here: the file as it was,
    put back after the purge, as that host's disk would still hold it) holds the purged
    terms. Its loader finds the purge count moved, removes the file and builds instead."""
    ids = [create(f"harbour crane {n}").memory_id for n in range(12)]
    secret = create("harbour ZEBRA-4471 PIN").memory_id
    _built()
    path = snapshot.path_for(*KEY)
    other_host = path.read_bytes()
    services.memory_purge(memory_id=secret, reason="erase")
    assert not path.exists()  # this host's: removed by the purge itself
    path.write_bytes(other_host)  # another host's disk
    loads = serving.counters.loads
    serving.clear()
    with pytest.raises(serving.NotReady):  # refused: built from Redis instead
        serving.serving_index(redis_client, "u-a", "c")
    assert serving.counters.loads == loads
    _join_build()
    saved = np.load(path, allow_pickle=False) if path.exists() else None
    if saved is not None:  # the fresh build's own snapshot, after the purge
        assert "zebra" not in json.loads(bytes(saved["meta"]))["vocab"]
    assert secret not in {h.memory_id for h in memory_search(
        user_id="u-a", query="ZEBRA-4471", profile="bm25").results}
    assert ids
