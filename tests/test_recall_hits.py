"""Recall hits counted by the search itself (``feed.lua``, the round trip that also checks
freshness and brings the hits' hashes): exactly once per result, folded exactly once also
with folds running at once, never for rows the database no longer serves, and by the caller
when the search could not (a re-ranked window)."""

import pytest
from django.utils import timezone

from memories import access, store
from memories.models import Memory
from search.memory_search import memory_search
from tests.helpers import create, memory_hash, with_folds_running

# The PostgreSQL pass runs these (scripts/test -m postgres): the access fold and the pending
# check's raw SQL.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def count(memory) -> int:
    return Memory.objects.get(pk=memory.memory_id).access_count


def listed(user_id="u-a") -> bool:
    pending = store.get_client().smembers(store.global_key("access:namespaces"))
    return user_id in {store.text(u) for u in pending}


def recall(query, **kw):
    return memory_search(user_id="u-a", query=query, limit=5, profile="bm25", count_hits=True,
                         **kw)


def test_a_recall_counts_its_results_in_the_search_round_trip(builtins):
    m = create("the office wifi password rotates monthly")
    other = create("the office coffee machine is broken")
    recall("wifi")  # builds the serving index
    found = recall("wifi")
    assert found.hits_counted and [h.memory_id for h in found.results] == [m.memory_id]
    assert memory_hash("u-a", m.memory_id)["access_count"] == "2"
    assert memory_hash("u-a", other.memory_id)["access_count"] == "0"
    assert listed()
    assert access.access_fold()["hits"] == 2 and count(m) == 2


def test_a_fold_unlists_the_namespace_and_the_next_recall_lists_it_again(builtins):
    m = create("deploys freeze on fridays")
    recall("deploys")
    assert access.access_fold()["hits"] == 1 and not listed()
    found = recall("deploys")
    assert found.hits_counted and listed()
    assert access.access_fold()["hits"] == 1 and count(m) == 2


@pytest.mark.django_db(transaction=True)  # threads read the rows: a real commit
def test_counts_stay_exact_with_counting_recalls_and_folds_running_at_once(builtins):
    ms = [create(f"lunch order number {n} for the team") for n in range(3)]
    recall("lunch")

    def recaller():
        for _ in range(25):
            assert recall("lunch").hits_counted

    errors = with_folds_running([recaller] * 4)
    assert errors == []
    access.access_fold()
    assert [count(m) for m in ms] == [101, 101, 101]
    assert [memory_hash("u-a", m.memory_id)["access_count"] for m in ms] == ["101"] * 3


def test_rows_the_database_no_longer_serves_are_not_counted(builtins):
    """A forget whose mirror failed: Redis still holds the memory, the database says gone."""
    gone = create("kumquat marmalade recipe from grandma")
    kept = create("the kumquat tree needs sun")
    recall("kumquat")
    Memory.objects.filter(pk=gone.memory_id).update(deleted_at=timezone.now(),
                                                    needs_resync=True)
    found = recall("kumquat")
    assert found.hits_counted and [h.memory_id for h in found.results] == [kept.memory_id]
    assert memory_hash("u-a", gone.memory_id)["access_count"] == "1"  # the first recall's
    assert memory_hash("u-a", kept.memory_id)["access_count"] == "2"
    assert access.access_fold()["hits"] == 3


def test_a_re_ranked_window_is_counted_by_the_caller_once(builtins, api):
    m = create("the quarterly report is due on the fifth")
    found = memory_search(user_id="u-a", query="quarterly report", profile="keyword",
                          count_hits=True)
    assert not found.hits_counted  # keyword re-ranks every match: not the search's rows
    assert memory_hash("u-a", m.memory_id)["access_count"] == "0"
    answer = api.post("/recall", {"user_id": "u-a", "query": "quarterly", "profile": "keyword"})
    assert answer.status_code == 200
    answer = api.post("/recall", {"user_id": "u-a", "query": "quarterly"})
    assert answer.status_code == 200 and answer.json()["results"][0]["memory_id"] == m.memory_id
    assert memory_hash("u-a", m.memory_id)["access_count"] == "2"


def test_a_window_ranked_by_meaning_reads_and_counts_only_its_results(builtins):
    """The default profile re-ranks a window of MEMORY_RERANK_WINDOW rows (semantic
    rescoring): the rows are ranked without their hashes, and the results' hashes come in
    one call that counts exactly those."""
    ms = [create(f"sailing lesson {n} on the lake " + "wind " * (n % 3)) for n in range(12)]
    memory_search(user_id="u-a", query="sailing", limit=3)  # builds the serving index
    found = memory_search(user_id="u-a", query="sailing lesson", limit=3, count_hits=True)
    assert found.hits_counted and len(found.results) == 3
    got = {h.memory_id for h in found.results}
    counts = {m.memory_id: memory_hash("u-a", m.memory_id)["access_count"] for m in ms}
    assert {m for m, c in counts.items() if c == "1"} == got
    assert sorted(counts.values()) == ["0"] * 9 + ["1"] * 3
    for h in found.results:
        assert h.content.startswith("sailing lesson") and h.version == 1
        assert h.explain.terms and h.explain.bm25 == pytest.approx(sum(h.explain.terms.values()))
    gone = found.results[0].memory_id
    Memory.objects.filter(pk=gone).update(deleted_at=timezone.now(), needs_resync=True)
    again = memory_search(user_id="u-a", query="sailing lesson", limit=3, count_hits=True)
    assert again.hits_counted and gone not in {h.memory_id for h in again.results}
    assert len(again.results) == 3
