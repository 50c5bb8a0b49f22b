"""Reindex builds a new generation beside the live one and swaps atomically."""

import pytest

from memories import queue as job_queue
from memories import services, store
from memories.errors import Conflict, IndexRebuilding
from operations import reindex
from search.index import postings
from search.memory_search import memory_search
from tests.helpers import create, index_read, index_terms, oracle_scores, stats

pytestmark = pytest.mark.django_db


def scores(query, user_id="u-a"):
    return {h.memory_id: h.score for h in memory_search(
        user_id=user_id, query=query, limit=100, profile="bm25").results}


def test_b06_statistics_stay_exact_over_repeated_reindexes(admin_api):
    m = create("alpha beta gamma delta epsilon")
    for _ in range(3):
        reindex.reindex_namespace("u-a")
    services.memory_update(memory_id=m.memory_id, content="alpha zeta")
    for field in ("c", "s", "xs"):
        live = index_terms(admin_api, "u-a", "alpha", "beta", field=field)
        assert live["N"] == 1 and live["avgdl"] == 2 and live["generation"] == 3
        assert live["postings"] == {"alpha": [m.memory_id], "beta": []}
    assert scores("alpha") == pytest.approx(oracle_scores("u-a", "alpha"), abs=1e-9)


def test_it_leaves_no_key_of_old_generations(builtins, redis_client):
    """Generation N's keys are named ``<name>@N:...`` (generation 0's ``<name>:...``): each
    reindex replaces the live generation's keys by the next one's, and leaves nothing else
    behind."""
    m = create("alpha beta")

    def keys():
        return {store.text(k) for k in redis_client.scan_iter(match=store.key("u-a", "") + "*")}

    first = keys()
    reindex.reindex_namespace("u-a")
    second = keys()
    reindex.reindex_namespace("u-a")
    third = keys()
    of_one = {k for k in second if "@1:" in k}
    assert of_one and not [k for k in third if "@1:" in k], third
    generation_zero = {k.replace("@1:", ":") for k in of_one}
    assert generation_zero <= first and not generation_zero & second, second
    assert third == {k.replace("@1:", "@2:") for k in second}
    live = index_read("u-a", "alpha", field="c")
    assert live["generation"] == 2 and live["postings"] == {"alpha": [m.memory_id]}


def test_it_keeps_writes_made_during_the_build_and_answers_from_a_complete_index(
        builtins, settings):
    ids = sorted(create(f"lorem ipsum memory {n} about otters").memory_id for n in range(12))
    settings.MEMORY_REINDEX_BATCH = 5
    before = scores("otters")
    seen_during = []
    written = []

    def during(done, total):
        # A recall mid-build is answered from the complete live generation.
        seen_during.append(scores("otters"))
        if done == 5:
            written.append(create("new memory about otters written mid build").memory_id)
            services.memory_update(memory_id=ids[11], content="edited mid build: beavers")
            # A row the builder has passed disappears: offsets would now skip a row.
            services.memory_forget(memory_id=ids[0])

    reindex.reindex_namespace("u-a", progress=during)
    assert len(seen_during[0]) == 12 and seen_during[0] == pytest.approx(before)
    after = scores("otters")
    oracle = oracle_scores("u-a", "otters")
    assert written[0] in after and ids[0] not in after and ids[11] not in after
    assert after == pytest.approx(oracle, abs=1e-9)
    assert scores("beavers").keys() == {ids[11]}
    assert stats("u-a")["N"] == 12


def test_writes_landing_as_a_reindex_starts_keep_its_statistics_exact(builtins, redis_client,
                                                                     monkeypatch):
    """A write put into the generation being built while the reindex began (right after
    its claim, and between the deletions of keys that followed) is counted once: N and the
    total length of every field equal its documents (issue 26: N 951 against 953)."""
    from operations import reindex_claim
    from search.index import generations
    from search.index.statistics import statistics_check

    for n in range(6):
        create(f"otter sighting number {n}")
    written = []
    take, delete_members = reindex_claim.claim_take, generations._delete_members

    def claim_then_write(client, user_id):
        claim = take(client, user_id)
        written.append(create("otter written as the claim was taken").memory_id)
        return claim

    def delete_then_write(client, registry, key_of):
        deleted = delete_members(client, registry, key_of)
        if len(written) == 1:  # after the first keys of a generation went
            written.append(create("otter written while keys were deleted").memory_id)
        return deleted

    monkeypatch.setattr(reindex_claim, "claim_take", claim_then_write)
    monkeypatch.setattr(generations, "_delete_members", delete_then_write)
    reindex.reindex_namespace("u-a")
    assert len(written) == 2
    assert statistics_check(redis_client, "u-a") == []
    assert stats("u-a")["N"] == 8
    assert scores("otter") == pytest.approx(oracle_scores("u-a", "otter"), abs=1e-9)


def test_it_refuses_a_second_concurrent_reindex(builtins, redis_client):
    from operations import reindex_claim

    create("alpha")
    reindex_claim.claim_take(redis_client, "u-a")  # a live builder's claim (fresh heartbeat)
    with pytest.raises(Conflict):
        reindex.reindex_namespace("u-a")


def test_a_claim_without_its_heartbeat_is_taken_over(builtins, redis_client):
    """A ``building`` mark whose owner's heartbeat expired (or one left by an older
    version, which had none) blocks nothing."""
    create("alpha")
    redis_client.set(store.key("u-a", "building"), 5)
    assert reindex.reindex_namespace("u-a")["indexed"] == 1


def test_it_restores_everything_after_a_flush(builtins, redis_client):
    from sessions import services as sessions
    from sessions import store as session_store

    live = sessions.session_create(user_id="u-a", session_id="s-live", ttl_seconds=600)
    sessions.session_append(session_id="s-live", messages=[{"role": "user", "content": "hi"}])
    ms = [create(f"flush test memory {w}") for w in ("red", "green", "blue")]
    before = {w: scores(w) for w in ("red", "green", "memory")}
    for key in list(redis_client.scan_iter(match=store.key("u-a", "") + "*")):
        redis_client.delete(key)
    with pytest.raises(IndexRebuilding):  # not an empty answer
        scores("red")
    reindex.reindex_all()
    assert {w: scores(w) for w in ("red", "green", "memory")} == before
    assert all(redis_client.exists(store.key("u-a", "m", m.memory_id)) for m in ms)
    assert [m["content"] for m in session_store.window_read(live, 5)] == ["hi"]


def test_average_lengths_are_each_fields_own_after_a_flush_and_a_second_reindex(
        builtins, redis_client):
    from search.index import fields as index_fields

    create("one two three four", context="five six seven eight nine ten")
    create("eleven twelve")
    base = store.key("u-a", "")
    redis_client.delete(*[k for k in redis_client.scan_iter(match=base + "*")])  # a flush
    expected = {index_fields.CONTENT: 3.0, index_fields.WITH_CONTEXT_STEMMED: 6.0}
    for _ in range(2):
        reindex.reindex_namespace("u-a")
        for field, average in expected.items():
            assert index_read("u-a", "one", field=field)["avgdl"] == average
            assert stats("u-a", field)["avgdl"] == average


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_recall_on_a_namespace_redis_lost_answers_503_and_queues_its_rebuild(
        builtins, api, redis_client, empty_queues):
    """Redis restarted empty: a recall says the index is being rebuilt (never a silent
    empty list), asks for one rebuild however many recalls come, and answers again once it
    ran. An empty namespace, or one of memories without searchable terms, still answers an
    empty list."""

    from tests.conftest import work

    made = [create(f"lighthouse logbook entry {w}") for w in ("dawn", "dusk")]
    create("🙂🙂", user_id="u-emoji")
    for key in list(redis_client.scan_iter(match=store.key("u-a", "") + "*")):
        redis_client.delete(key)
    for _ in range(3):
        lost = api.post("/recall", {"user_id": "u-a", "query": "lighthouse"})
        assert lost.status_code == 503, lost.content
        assert lost.json()["error"]["code"] == "index_rebuilding"
        assert lost["Retry-After"] == "5"
    assert job_queue.get_queue("index").count == 1
    for user_id in ("u-new", "u-emoji"):
        answer = api.post("/recall", {"user_id": user_id, "query": "lighthouse"})
        assert answer.status_code == 200 and answer.json()["results"] == []
    work()
    found = api.post("/recall", {"user_id": "u-a", "query": "lighthouse"})
    assert found.status_code == 200
    assert {r["memory_id"] for r in found.json()["results"]} == {m.memory_id for m in made}


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_write_after_redis_lost_the_index_never_makes_recall_answer_part_of_it(
        builtins, api, redis_client, empty_queues):
    """Redis restarted empty, then a write lands before any rebuild: the index holds that
    one memory only. A recall must not answer from it as if it were whole (the old memories
    silently missing): it answers 503 until the rebuild ran, then everything."""
    from tests.conftest import work

    old = [create(f"lighthouse logbook entry {w}") for w in ("dawn", "dusk")]
    for key in list(redis_client.scan_iter(match=store.key("u-a", "") + "*")):
        redis_client.delete(key)
    after = create("lighthouse logbook entry noon")
    for _ in range(2):
        partial = api.post("/recall", {"user_id": "u-a", "query": "lighthouse"})
        assert partial.status_code == 503, partial.content
        assert partial.json()["error"]["code"] == "index_rebuilding"
    assert job_queue.get_queue("index").count == 1
    work()
    found = api.post("/recall", {"user_id": "u-a", "query": "lighthouse"})
    assert found.status_code == 200, found.content
    assert ({r["memory_id"] for r in found.json()["results"]}
            == {m.memory_id for m in [*old, after]})
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT


def test_a_new_namespace_answers_its_first_recall_and_is_stamped_whole(builtins, api,
                                                                       redis_client):
    """The first write of a namespace cannot tell a new namespace from a lost one: its first
    recall checks the database, finds its memories all indexed, and answers."""
    made = [create(f"harbour pilot {n}", user_id="u-fresh") for n in range(3)]
    stamp = store.text(redis_client.get(store.key("u-fresh", "format")))
    assert stamp == "new:" + postings.INDEX_FORMAT
    found = api.post("/recall", {"user_id": "u-fresh", "query": "harbour pilot"})
    assert found.status_code == 200, found.content
    assert {r["memory_id"] for r in found.json()["results"]} == {m.memory_id for m in made}
    stamp = store.text(redis_client.get(store.key("u-fresh", "format")))
    assert stamp == postings.INDEX_FORMAT
