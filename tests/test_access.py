"""Access counts: recalls count hits in Redis at once; folds bring them to the database
exactly once, also across crashes and concurrent folders."""

import datetime as dt

import pytest
from django.utils import timezone
from rq.registry import ScheduledJobRegistry

from memories import access, services, store
from memories import queue as job_queue
from memories.models import AccessFold, Memory
from operations import backup, jobs, policy
from tests.helpers import create, memory_hash, with_folds_running

# The PostgreSQL pass runs these (scripts/test -m postgres): the access fold's executemany UPDATE.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def count(memory) -> int:
    return Memory.objects.get(pk=memory.memory_id).access_count


def pending_batches(user_id="u-a") -> set[str]:
    raw = store.get_client().smembers(store.key(user_id, "access", "batches"))
    return {store.text(b) for b in raw}


def test_a_recall_counts_in_redis_now_and_in_the_database_at_the_fold(builtins, api):
    m = create("the office wifi password rotates monthly")
    for _ in range(3):
        assert api.post("/recall", {"user_id": "u-a", "query": "wifi"}).status_code == 200
    assert memory_hash("u-a", m.memory_id)["access_count"] == "3"
    assert count(m) == 0  # a recall writes nothing to the database
    assert access.access_fold() == {"namespaces": 1, "batches": 1, "hits": 3}
    row = Memory.objects.get(pk=m.memory_id)
    assert row.access_count == 3 and row.version == 1
    assert row.accessed_at.timestamp() == pytest.approx(
        float(memory_hash("u-a", m.memory_id)["accessed_at"]), abs=1e-3)
    assert access.access_fold() == {"namespaces": 0, "batches": 0, "hits": 0}
    assert count(m) == 3


def test_the_memory_page_folds_before_it_shows_the_count(builtins, viewer_client):
    m = create("quarterly planning happens in the big room")
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    page = viewer_client.get(f"/memories/{m.memory_id}/")
    assert page.status_code == 200
    assert "2 times" in page.content.decode()


def test_a_batch_applied_before_a_crash_is_not_applied_again(builtins, monkeypatch):
    m = create("deploys freeze on fridays")
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    real_apply = services.memory_access_apply

    def apply_then_crash(**kwargs):
        real_apply(**kwargs)
        raise RuntimeError("worker killed after the commit, before the batch was dropped")

    monkeypatch.setattr(services, "memory_access_apply", apply_then_crash)
    with pytest.raises(RuntimeError):
        access.access_fold()
    assert count(m) == 1 and len(pending_batches()) == 1
    monkeypatch.setattr(services, "memory_access_apply", real_apply)
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    assert access.access_fold()["hits"] == 1  # the new hit; the old batch only dropped
    assert count(m) == 2 and pending_batches() == set()


def test_a_batch_taken_before_a_crash_is_applied_by_the_next_fold(builtins, monkeypatch):
    m = create("the staging database is reset nightly")
    for _ in range(4):
        access.access_record(user_id="u-a", memory_ids=[m.memory_id])

    def crash(**kwargs):
        raise RuntimeError("worker killed before the commit")

    monkeypatch.setattr(services, "memory_access_apply", crash)
    with pytest.raises(RuntimeError):
        access.access_fold()
    assert count(m) == 0
    monkeypatch.undo()
    assert access.access_fold()["hits"] == 4
    assert count(m) == 4 and pending_batches() == set()


@pytest.mark.django_db(transaction=True)  # threads read the rows: a real commit
def test_counts_stay_exact_with_recalls_and_folds_running_at_once(builtins):
    ms = [create(f"shared memory number {n} about lunch") for n in range(3)]
    ids = [m.memory_id for m in ms]

    def recall(n):
        for _ in range(40):
            access.access_record(user_id="u-a", memory_ids=ids[: 1 + n % 3])

    errors = with_folds_running([lambda n=n: recall(n) for n in range(6)])
    assert errors == []
    access.access_fold()
    # Recallers 0 and 3 hit one memory, 1 and 4 two, 2 and 5 three: 40 times each.
    assert [count(m) for m in ms] == [240, 160, 80]
    assert [memory_hash("u-a", i)["access_count"] for i in ids] == ["240", "160", "80"]
    assert sum(AccessFold.objects.values_list("hits", flat=True)) == 480


def test_an_update_before_the_fold_does_not_lower_the_hot_count(builtins):
    m = create("coffee machine on floor three")
    for _ in range(3):
        access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    services.memory_update(memory_id=m.memory_id, content="coffee machine on floor four")
    assert memory_hash("u-a", m.memory_id)["access_count"] == "3"
    access.access_fold()
    services.memory_update(memory_id=m.memory_id, importance=0.9)
    assert memory_hash("u-a", m.memory_id)["access_count"] == "3"
    assert count(m) == 3


def test_hits_of_a_purged_memory_and_a_look_alike_namespace_stay_apart(builtins):
    gone = create("temporary note", user_id="user_1024")
    kept = create("temporary note", user_id="user_10240")
    access.access_record(user_id="user_1024", memory_ids=[gone.memory_id])
    access.access_record(user_id="user_10240", memory_ids=[kept.memory_id, kept.memory_id])
    services.memory_purge(memory_id=gone.memory_id)
    assert access.access_fold(user_ids=["user_1024"])["hits"] == 1
    assert count(kept) == 0
    assert access.access_fold()["hits"] == 2
    assert count(kept) == 2


def test_the_periodic_job_folds_and_forgets_old_fold_records(builtins):
    m = create("release notes go out on tuesdays")
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    old = AccessFold.objects.create(batch_id="0" * 32, user_id="u-a", hits=1)
    AccessFold.objects.filter(pk=old.pk).update(folded_at=timezone.now() - dt.timedelta(days=2))
    result = jobs.periodic_access_fold_job()
    assert result["hits"] == 1 and result["pruned"] == 1
    assert count(m) == 1
    assert list(AccessFold.objects.values_list("hits", flat=True)) == [1]
    registry = ScheduledJobRegistry(queue=job_queue.get_queue("index"))
    assert jobs.PERIODIC_ACCESS_FOLD_ID in registry.get_job_ids()
    registry.remove(jobs.PERIODIC_ACCESS_FOLD_ID, delete_job=True)


def test_export_and_the_cleanup_plan_see_every_hit(builtins):
    m = create("an old but much used note", created_at=timezone.now() - dt.timedelta(days=400),
               importance=0.1)
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    assert policy.cleanup_plan(user_id="u-a").forget == []  # used just now: not idle
    exported = backup.export_memories(user_id="u-a")["memories"]
    assert [e["access_count"] for e in exported] == [1]


def test_batches_applied_out_of_order_never_move_accessed_at_back(builtins, monkeypatch):
    m = create("deploys freeze on fridays")
    older, newer = 1_700_000_000.0, 1_700_000_100.0
    access.access_record(user_id="u-a", memory_ids=[m.memory_id], now=older)
    real_apply = services.memory_access_apply

    def blip(**kwargs):
        raise RuntimeError("database blip")

    monkeypatch.setattr(services, "memory_access_apply", blip)
    with pytest.raises(RuntimeError):
        access.access_fold()  # the batch with the older hit stays behind
    monkeypatch.setattr(services, "memory_access_apply", real_apply)
    # A concurrent folder applies a batch with a newer hit before the old one is retried.
    hits = {m.memory_id: (1, dt.datetime.fromtimestamp(newer, dt.UTC))}
    services.memory_access_apply(batch_id="f" * 32, user_id="u-a", hits=hits)
    access.access_fold()
    row = Memory.objects.get(pk=m.memory_id)
    assert row.access_count == 2
    assert row.accessed_at.timestamp() == pytest.approx(newer, abs=1e-3)


def test_a_reader_sees_hits_another_folder_applied_after_it_read_the_row(builtins):
    m = create("quarterly planning happens in the big room")
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    row = Memory.objects.get(pk=m.memory_id)
    access.access_fold()  # the periodic job, between the read and the fold-on-read
    assert access.with_hits_folded(row).access_count == 1


def test_a_replace_import_makes_the_documents_counts_the_truth(builtins):
    m = create("the office wifi password rotates monthly")
    for _ in range(5):
        access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    access.access_fold()
    doc = backup.export_memories(user_id="u-a")
    doc["memories"][0]["access_count"] = 1  # an older backup
    for _ in range(3):  # and hits still pending when it is restored
        access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    backup.import_memories(doc=doc, mode="replace")
    access.access_fold()
    assert count(m) == 1
    assert memory_hash("u-a", m.memory_id)["access_count"] == "1"


@pytest.mark.parametrize("field, value", [
    ("memory_id", "odd:id ü"), ("memory_id", 7), ("version", "two"), ("version", 0),
    ("access_count", -1), ("access_count", 1.5)])
def test_a_replace_import_refuses_bad_ids_and_numbers(builtins, admin_api, field, value):
    m = create("a memory to export")
    doc = backup.export_memories(user_id="u-a")
    doc["memories"][0][field] = value
    resp = admin_api.post("/import?mode=replace", doc)
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == field
    assert Memory.objects.get(pk=m.memory_id).version == 1  # nothing changed
