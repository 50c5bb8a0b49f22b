"""Index format 3: hot-store hashes carry ``author`` (the recall filter reads it there).

An index stamped "2" may hold hashes written before ``author`` joined them; the serving
process that finds the older stamp queues one reindex, which rewrites every hash from the
database, after which ``author`` filters find those memories."""

import pytest

from memories import queue as job_queue
from memories import store
from search.index import postings
from search.memory_search import memory_search
from tests.conftest import work
from tests.helpers import create, memory_hash

pytestmark = pytest.mark.django_db


def test_it_stamps_format_3_or_later(builtins, redis_client):
    create("first memory", author="ana")
    memory_search(user_id="u-a", query="first memory", limit=5, profile="bm25")
    assert int(postings.INDEX_FORMAT) >= 3
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_it_upgrades_a_format_2_index_whose_hashes_lack_author(builtins, redis_client,
                                                                 empty_queues):
    ids = [create(f"lighthouse keeper log {n}", author="ana").memory_id for n in range(6)]
    # As a namespace written before ``author`` was mirrored: stamp "2", no author field.
    for memory_id in ids:
        redis_client.hdel(store.key("u-a", "m", memory_id), "author")
    redis_client.set(store.key("u-a", "format"), "2")

    def by_ana():
        return {h.memory_id for h in memory_search(
            user_id="u-a", query="lighthouse keeper", limit=10, profile="bm25",
            author="ana").results}

    assert by_ana() == set()  # the old hashes cannot pass the filter ...
    assert job_queue.get_queue("index").count == 1  # ... and one upgrade is queued
    work()
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT
    assert all(memory_hash("u-a", m)["author"] == "ana" for m in ids)
    assert by_ana() == set(ids)
