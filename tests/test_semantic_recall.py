"""Semantic rescoring end to end: the worker's job computes memory embeddings after commit,
recall with a ``w_semantic`` profile mixes their cosine into the BM25 window, a purge removes
them, and recall never computes a memory's embedding itself."""

import pytest

from memories import services
from search import embeddings
from search.models import MemoryEmbedding, RankingProfile
from tests.helpers import create

# The PostgreSQL pass runs these (scripts/test -m postgres): the embeddings' raw SQL.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _encodes_settled():
    """A recall that needed no query vector leaves its encode running: it ends within the
    test that started it, never in the next one's swapped encoder."""
    yield
    embeddings.encodes_settle()


@pytest.fixture
def semantic_profile(builtins):
    return RankingProfile.objects.create(name="sem", stemming=True, context=True,
                                         w_semantic=0.6)


def test_the_job_embeds_new_and_changed_memories_only(builtins):
    a = create("Calvin relaxes by playing guitar in his studio")
    b = create("the mansion has a pool")
    assert embeddings.pending_count() == 2
    assert embeddings.embed_pending() == 2
    assert embeddings.pending_count() == 0 and embeddings.embed_pending() == 0
    services.memory_update(memory_id=b.memory_id, content="the new mansion has a big pool")
    assert embeddings.pending_count() == 1
    assert embeddings.vectors_for([a.memory_id, b.memory_id]).keys() == {a.memory_id}
    assert embeddings.embed_pending() == 1
    assert embeddings.vectors_for([b.memory_id]).keys() == {b.memory_id}


def test_recall_never_mixes_in_the_vector_of_an_older_text(semantic_profile):
    """After an edit, until the job has run again, the old text's vector is not this memory's:
    recall treats it as not embedded (the window read checks the served content's hash)."""
    from search.memory_search import memory_search

    edited = create("Calvin relaxes with his guitar in the studio")
    kept = create("Calvin relaxes by the sea after work")
    embeddings.embed_pending()
    services.memory_update(memory_id=edited.memory_id,
                           content="Calvin relaxes with his guitar on the roof")
    found = memory_search(user_id="u-a", query="Calvin relaxes", profile=semantic_profile)
    by_id = {h.memory_id: h for h in found.results}
    assert by_id[edited.memory_id].content.endswith("on the roof")
    assert by_id[edited.memory_id].explain.semantic is None
    assert by_id[kept.memory_id].explain.semantic is not None
    embeddings.embed_pending()
    found = memory_search(user_id="u-a", query="Calvin relaxes", profile=semantic_profile)
    assert all(h.explain.semantic is not None for h in found.results)


def test_a_new_encoder_model_re_embeds_what_the_old_one_made(builtins, monkeypatch):
    """Vectors are read by model name, so an encoder change must make every one pending (a
    memory left to BM25 stays done)."""
    en = create("Calvin relaxes with his guitar")
    create("张工上周提的那个 Redis 超时问题")
    assert embeddings.embed_pending() == 2 and embeddings.pending_count() == 0
    monkeypatch.setattr(embeddings.encoder, "MODEL_NAME", "a-newer-model")
    assert embeddings.vectors_for([en.memory_id]) == {}
    assert embeddings.pending_count() == 1 and embeddings.embed_pending() == 1
    assert MemoryEmbedding.objects.get(memory_id=en.memory_id).model == "a-newer-model"
    assert en.memory_id in embeddings.vectors_for([en.memory_id])


def test_a_purge_removes_the_embedding(builtins):
    m = create("a secret to purge")
    embeddings.embed_pending()
    assert MemoryEmbedding.objects.filter(memory_id=m.memory_id).exists()
    services.memory_purge(memory_id=m.memory_id, reason="gdpr")
    assert not MemoryEmbedding.objects.filter(memory_id=m.memory_id).exists()


def test_the_cosine_reorders_the_bm25_window(semantic_profile):
    from search.memory_search import memory_search

    unwind = create("Calvin: after a long day I unwind with my guitar and relax at home")
    other = create("Calvin: the day was long, the unwind cable of the crane broke at work")
    create("Calvin: the weather was nice")
    embeddings.embed_pending()
    plain = memory_search(user_id="u-a", query="How does Calvin relax and unwind?",
                          profile=RankingProfile(name="plain", stemming=True, context=True),
                          limit=3)
    mixed = memory_search(user_id="u-a", query="How does Calvin relax and unwind?",
                          profile=semantic_profile, limit=3)
    assert {h.memory_id for h in plain.results} >= {unwind.memory_id, other.memory_id}
    assert mixed.results[0].memory_id == unwind.memory_id
    assert all(h.explain.semantic is not None for h in mixed.results)
    assert plain.results[0].explain.semantic is None
    by_id = {h.memory_id: h.explain.semantic for h in mixed.results}
    assert by_id[unwind.memory_id] > by_id[other.memory_id]


def test_recall_never_embeds_a_memory(semantic_profile, monkeypatch):
    from search.memory_search import memory_search

    m = create("Calvin plays guitar to relax")
    calls = []
    real = embeddings.encoder.encode
    monkeypatch.setattr(embeddings.encoder, "encode",
                        lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw))
    embeddings.clear_query_cache()
    found = memory_search(user_id="u-a", query="guitar relax", profile=semantic_profile)
    assert [h.memory_id for h in found.results] == [m.memory_id]
    assert found.results[0].explain.semantic is None  # not embedded yet: BM25 part only
    # The query's encode starts with the search (it may still be running): never a memory.
    assert all(c == ["guitar relax"] for c in calls)
    assert not MemoryEmbedding.objects.exists()


def test_a_window_partly_embedded_mixes_the_known_and_keeps_bm25_for_the_rest(
        semantic_profile, monkeypatch):
    from search.memory_search import memory_search

    old = create("Calvin relaxes with his guitar after work")
    embeddings.embed_pending()
    new = create("Calvin relaxes at the beach")  # written after the job ran
    calls = []
    real = embeddings.encoder.encode
    monkeypatch.setattr(embeddings.encoder, "encode",
                        lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw))
    embeddings.clear_query_cache()
    found = memory_search(user_id="u-a", query="Calvin relaxes", profile=semantic_profile)
    by_id = {h.memory_id: h.explain.semantic for h in found.results}
    assert by_id[old.memory_id] is not None and by_id[new.memory_id] is None
    assert calls == [["Calvin relaxes"]]  # the query only; the new memory waits for the job


def test_the_query_is_encoded_while_the_bm25_phase_runs(semantic_profile, monkeypatch):
    """The encode runs on its own thread, started before the BM25 phase's database check:
    that check sees it begin (a sequential recall would encode only after it)."""
    import threading

    from search import memory_search as recall

    for text in ("Calvin relaxes with his guitar", "Calvin unwinds at the beach"):
        create(text)
    embeddings.embed_pending()
    started, seen, threads = threading.Event(), [], []
    real_encode, real_verified = embeddings.encoder.encode, recall.docs_verified

    def encode(texts, **kw):
        threads.append(threading.current_thread().name)
        started.set()
        return real_encode(texts, **kw)

    def verified(docs, *args):
        seen.append(started.wait(timeout=10))
        return real_verified(docs, *args)

    monkeypatch.setattr(embeddings.encoder, "encode", encode)
    monkeypatch.setattr(recall, "docs_verified", verified)
    embeddings.clear_query_cache()
    found = recall.memory_search(user_id="u-a", query="How does Calvin relax?",
                                 profile=semantic_profile)
    assert seen == [True] and len(threads) == 1 and threads[0].startswith("encode")
    assert all(h.explain.semantic is not None for h in found.results)
    again = recall.memory_search(user_id="u-a", query="How does Calvin relax?",
                                 profile=semantic_profile)
    assert len(threads) == 1  # the second time from the process's cache
    assert [(h.memory_id, h.score) for h in again.results] == [
        (h.memory_id, h.score) for h in found.results]


@pytest.mark.django_db(transaction=True)  # a real commit: another process reads the rows
def test_a_forked_process_encodes_on_threads_of_its_own(builtins):
    """A gunicorn worker or RQ work horse forks after its parent encoded: the child must not
    queue on the parent's encoding threads (which it does not have) and wait forever."""
    import os
    import time

    embeddings.query_vector_soon("warm the parent's pool")()
    pid = os.fork()
    if pid == 0:  # the child: encode a new query on the pool, then leave at once
        try:
            vector = embeddings.query_vector_soon("a question only the child asks")()
            os._exit(0 if vector.shape == (embeddings.encoder.DIM,) else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the child's encode never ran")
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_same_text_is_encoded_once_across_namespaces(builtins, monkeypatch):
    create("the lighthouse keeper rows to the island", user_id="u-a")
    calls = []
    real = embeddings.encoder.encode
    monkeypatch.setattr(embeddings.encoder, "encode",
                        lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw))
    assert embeddings.embed_pending() == 1
    create("the lighthouse keeper rows to the island", user_id="u-b")
    assert embeddings.embed_pending() == 1
    assert calls == [["the lighthouse keeper rows to the island"]]
    a, b = MemoryEmbedding.objects.order_by("memory__user_id")
    assert bytes(a.vector) == bytes(b.vector)


def test_a_chinese_query_stays_with_bm25(semantic_profile):
    from search.memory_search import memory_search

    create("我喜欢在家弹吉他放松")
    embeddings.embed_pending()
    found = memory_search(user_id="u-a", query="怎么放松", profile=semantic_profile)
    assert found.results and found.results[0].explain.semantic is None


def test_the_job_leaves_chinese_memories_to_bm25(semantic_profile, monkeypatch):
    """A memory mostly in CJK is not encoded (the model is English-only and a Chinese query is
    never rescored): marked done with no vector; an English edit makes it pending again."""
    from search.memory_search import memory_search

    zh = create("张工上周提的那个 Redis 超时问题已经解决了")
    en = create("the Redis timeout that Zhang raised is fixed")
    mixed = create("Calvin said 你好 to the Redis team before the timeout fix")
    calls = []
    real = embeddings.encoder.encode
    monkeypatch.setattr(embeddings.encoder, "encode",
                        lambda texts, **kw: calls.append(sorted(texts)) or real(texts, **kw))
    assert embeddings.embed_pending() == 3
    assert calls == [sorted([en.content, mixed.content])]
    assert embeddings.pending_count() == 0 and embeddings.embed_pending() == 0
    held = embeddings.vectors_for([zh.memory_id, en.memory_id, mixed.memory_id])
    assert held.keys() == {en.memory_id, mixed.memory_id}
    # No reader that selects the encoder's rows (an older process too) meets its empty vector.
    marker = MemoryEmbedding.objects.get(memory_id=zh.memory_id)
    assert marker.model == embeddings.LEFT_TO_BM25 and bytes(marker.vector) == b""
    embeddings.clear_query_cache()
    found = memory_search(user_id="u-a", query="Redis timeout", profile=semantic_profile)
    by_id = {h.memory_id: h.explain.semantic for h in found.results}
    assert by_id[zh.memory_id] is None and by_id[en.memory_id] is not None
    services.memory_update(memory_id=zh.memory_id, content="the Redis timeout is fixed now")
    assert embeddings.pending_count() == 1 and embeddings.embed_pending() == 1
    assert zh.memory_id in embeddings.vectors_for([zh.memory_id])


def test_the_default_profile_rescores_semantically(builtins):
    from search.memory_search import memory_search
    from search.profiles import profile_resolve

    assert profile_resolve(None).name == "context" and profile_resolve(None).w_semantic == 0.4
    unwind = create("Calvin: after a long day I unwind with my guitar and relax at home")
    create("Calvin: the day was long, the unwind cable of the crane broke at work")
    before = memory_search(user_id="u-a", query="How does Calvin relax and unwind?", limit=2)
    assert all(h.explain.semantic is None for h in before.results)  # BM25 until the job ran
    embeddings.embed_pending()
    after = memory_search(user_id="u-a", query="How does Calvin relax and unwind?", limit=2)
    assert after.results[0].memory_id == unwind.memory_id
    assert all(h.explain.semantic is not None for h in after.results)


def test_a_memory_the_time_range_brings_in_is_rescored_too(builtins):
    """The window's embeddings are read with its database check; a memory that joins the
    window only through the query's time range (no shared word) is read after, not taken
    for one without an embedding."""
    from datetime import UTC, datetime

    from search.memory_search import memory_search

    day = datetime(2026, 5, 2, 20, tzinfo=UTC)
    quiet = create("These days I have been feeling a bit down and anxious", created_at=day)
    for n in range(1, 4):
        create(f"My mood was fine, the mood of a quiet day {n}",
               created_at=day.replace(day=2 + n))
    embeddings.embed_pending()
    found = memory_search(user_id="u-a", query="What was my mood on May 2nd?",
                          profile="context", now=datetime(2026, 6, 1, tzinfo=UTC).timestamp())
    by_id = {h.memory_id: h for h in found.results}
    assert by_id[quiet.memory_id].explain.terms == {}  # in the window by its day alone
    assert all(h.explain.semantic is not None for h in found.results)


def test_a_run_walks_the_memories_by_primary_key_not_a_sort_of_the_table_per_batch(builtins):
    """Each batch of the job read the first stale memories by ``created_at``: a scan and a
    sort of the whole table per batch of 64 (250 ms a batch at 100k memories, a run
    quadratic in the namespace). It continues from the last batch's memory id instead."""
    from django.db import connection

    ids = sorted(create(f"note {n} about the harbour").memory_id for n in range(5))
    assert embeddings.embed_pending(batch=2) == 5 and embeddings.pending_count() == 0
    services.memory_update(memory_id=ids[3], content="a changed note about the harbour")
    assert [r[0] for r in embeddings._batch(ids[1], 64)] == [ids[3]]
    assert list(embeddings._batch(ids[3], 64)) == []
    if connection.vendor != "sqlite":
        return  # PostgreSQL's plan is chosen by cost: on a table this small it may sort
    sql, params = embeddings._batch("", 64).query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
    assert "TEMP B-TREE" not in plan, plan
