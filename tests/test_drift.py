"""Drift beyond versions: index statistics that differ from their documents, and expired
short-term memories that Redis still indexes; both found and repaired by reconcile."""

import time

import pytest

from memories import store
from operations import drift
from search.index import fields as index_fields
from search.index import postings
from search.index.statistics import statistics_check
from search.memory_search import memory_search
from tests.helpers import create, index_read, stats

pytestmark = pytest.mark.django_db


def test_statistics_that_differ_from_the_documents_are_drift_and_reconcile_repairs_them(
        builtins, redis_client, admin_api, admin_role_client):
    for n in range(5):
        create(f"lantern festival night {n}")
    live = postings.live_field(redis_client, "u-a", index_fields.CONTENT)
    redis_client.hincrby(store.key("u-a", live, "stats"), "N", -2)
    redis_client.hincrby(store.key("u-a", live, "stats"), "total_len", -7)
    [off] = statistics_check(redis_client, "u-a")
    assert (off.field, off.N, off.docs, off.total_len + 7) == (
        index_fields.CONTENT, 3, 5, off.docs_len)
    health = admin_api.get("/index/health?refresh=1").json()
    assert (health["drift"], health["drifted_statistics"]) == (1, ["u-a"])
    page = admin_role_client.get("/index/").content.decode()
    assert 'id="drifted-statistics"' in page and 'id="no-drift"' not in page
    repaired = drift.drift_repair()
    assert repaired["statistics"] == 1 and repaired["drift_after"] == 0
    assert statistics_check(redis_client, "u-a") == []
    assert stats("u-a")["N"] == 5
    assert admin_api.get("/index/health?refresh=1").json()["drift"] == 0


def test_the_check_reads_records_whose_terms_are_not_ascii(builtins, redis_client):
    """The check reads each record's first line only: a range that ends inside a character
    of the terms after it is no error (the Index page answered 500 on the demo data)."""
    for n in range(12):
        create("杭州出差" * (n % 4 + 1) + " 请问会员怎么续费" + "ä" * n)
    assert statistics_check(redis_client, "u-a") == []
    assert drift.drift_compute().statistics == []


def test_a_check_during_writes_reads_again_until_the_namespace_held_still(builtins,
                                                                        redis_client,
                                                                        monkeypatch):
    from search.index import statistics

    create("quiet harbour")
    counts, calls = statistics._counts, []

    def count_while_writing(client, user_id):
        calls.append(user_id)
        if len(calls) == 1:
            create(f"busy harbour {len(calls)}")  # lands between the check's reads
        return counts(client, user_id)

    monkeypatch.setattr(statistics, "_counts", count_while_writing)
    assert statistics_check(redis_client, "u-a") == []
    assert len(calls) == 2


def test_reconcile_removes_every_index_entry_of_an_expired_short_term_memory(builtins,
                                                                           redis_client):
    gone = create("fleeting reminder about quinces", type="short_term", ttl_seconds=1)
    kept = create("lasting reminder about quinces")
    time.sleep(1.2)  # past expire_at and the hash's own TTL; no recall meets it
    before = drift.drift_compute()
    assert before.expired == [("u-a", gone.memory_id)] and before.count == 0
    drift.drift_repair()
    base = store.namespace_base("u-a")
    keys = [store.text(k) for k in redis_client.scan_iter(match=base + "*")]
    assert [k for k in keys if gone.memory_id in k] == []
    # Every field of the index holds the kept memory alone: no posting of any of the
    # expired memory's terms, and statistics that count one document.
    for field, analyzer in index_fields.ANALYZERS.items():
        terms = analyzer.term_frequencies(gone.content)
        live = index_read("u-a", *terms, field=field)
        assert live["N"] == 1 == stats("u-a", field)["N"]
        assert not [t for t, ids in live["postings"].items() if gone.memory_id in ids]
        assert kept.memory_id in live["postings"][analyzer.tokens("quinces")[0]]
    assert [h.memory_id for h in memory_search(user_id="u-a", query="quinces").results] == [
        kept.memory_id]
