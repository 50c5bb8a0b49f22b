"""An index left by the previous format (6: a document vector per field and a sorted set of
postings per term, written by that release's put.lua, kept in tests/data) upgrades itself:
served exactly meanwhile, writes during the upgrade seen at once, then rebuilt by one
background reindex into today's layout (one record per memory), the old keys deleted
without a keyspace SCAN, and served exactly after."""

from pathlib import Path

import pytest

from memories import queue as job_queue
from memories import services, store
from memories.mirror import mirror_args
from memories.models import Memory
from operations.reindex import reindex_namespace
from search.index import fields as index_fields
from search.index import postings
from search.memory_search import memory_search
from search.serving import documents, feed
from tests.helpers import create, oracle_scores

pytestmark = pytest.mark.django_db
FORMAT6_PUT = Path(__file__).with_name("data") / "put_format6.lua"


def _format6_args(memory: Memory) -> list:
    """The ARGV of the format-6 put.lua for one memory, as that release's mirror made it:
    the whole hash (empty fields too), the filter fields, each field's terms."""
    args = mirror_args(memory, memory.created_at)
    hash_fields = {name: "" for name in documents.EMPTY_WHEN_ABSENT} | args["hash_fields"]
    stored = index_fields.record_read(args["record"].text).meta
    meta = {"#type": stored["type"], "#conv": stored.get("conv", ""),
            "#exp": stored.get("exp", ""), "#vf": stored["vf"]}
    if "vu" in stored:
        meta["#vu"] = stored["vu"]
    out = [memory.memory_id, memory.version, 0, len(hash_fields)]
    for pair in hash_fields.items():
        out += pair
    out.append(len(meta))
    for pair in meta.items():
        out += pair
    fields = {f: tf for f, tf in index_fields.field_term_frequencies(
        memory.content, memory.context).items() if tf}
    out.append(len(fields))
    for name, tf in fields.items():
        out += [name, sum(tf.values()), len(tf)]
        for pair in tf.items():
            out += pair
    return out


def _write_format6(client, user_id: str) -> None:
    """Replace the namespace's keys by the index the previous release wrote of its rows."""
    base = store.namespace_base(user_id)
    client.delete(*client.keys(base.replace("{", "[{]").replace("}", "[}]") + "*"))
    script = client.register_script(FORMAT6_PUT.read_text())
    for memory in Memory.objects.filter(user_id=user_id, deleted_at__isnull=True):
        script(keys=[store.key(user_id, "m", memory.memory_id)],
               args=[base, "write", 12.0, 1.2, 0.75, 10000, "6", 1, *_format6_args(memory)])
    client.set(base + "format", "6")  # a settled namespace of that release
    feed.clear()


def _keys(client, user_id: str, pattern: str) -> list[str]:
    base = store.namespace_base(user_id).replace("{", "[{]").replace("}", "[}]")
    return sorted(store.text(k) for k in client.keys(base + pattern))


def _assert_oracle(query: str, user_id: str = "u-a") -> None:
    found = memory_search(user_id=user_id, query=query, limit=100, profile="bm25")
    got = {h.memory_id: h.score for h in found.results}
    want = oracle_scores(user_id, query)
    assert got.keys() == want.keys(), query
    for memory_id, value in want.items():
        assert got[memory_id] == pytest.approx(value, abs=1e-9)


def test_a_format6_index_is_served_exactly_then_rebuilt_into_records(builtins, empty_queues):
    client = store.get_client()
    ids = [create(f"harbour pilot boat {n} " + "tide " * (n % 3)).memory_id for n in range(12)]
    create("ferry timetable for the harbour")
    _write_format6(client, "u-a")
    assert _keys(client, "u-a", "c:t:*") and not _keys(client, "u-a", "v:d:*")

    _assert_oracle("harbour pilot")  # served from the old document vectors
    _assert_oracle("ferry")
    queued = job_queue.get_queue("index").jobs
    assert [(j.func_name, j.args) for j in queued] == [("operations.jobs.reindex_job", ("u-a",))]

    # Writes during the upgrade: each memory written moves to a record at once.
    new = create("pilot boat moored at the harbour wall").memory_id
    services.memory_update(memory_id=ids[0], content="harbour master office")
    services.memory_forget(memory_id=ids[1])
    assert _keys(client, "u-a", f"v:d:{new}") and not _keys(client, "u-a", f"c:d:{ids[0]}")
    _assert_oracle("harbour pilot")
    _assert_oracle("tide boat")

    scans = []
    real_scan = type(client).scan_iter

    def scan_iter(self, *args, **kwargs):
        scans.append(kwargs.get("match"))
        return real_scan(self, *args, **kwargs)

    type(client).scan_iter = scan_iter
    try:
        reindex_namespace("u-a")  # what the queued job does, here so its commands are seen
    finally:
        type(client).scan_iter = real_scan
    assert scans == []  # the old keys were found through their registries
    assert store.text(client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT
    assert not _keys(client, "u-a", "c:*") and not _keys(client, "u-a", "s:*")
    assert not _keys(client, "u-a", "xs:*") and not _keys(client, "u-a", "v:d:*")
    live = Memory.objects.filter(user_id="u-a", deleted_at__isnull=True).count()
    assert len(_keys(client, "u-a", "v@1:d:*")) == live
    feed.clear()
    _assert_oracle("harbour pilot")
    _assert_oracle("tide boat master")
