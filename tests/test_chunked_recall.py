"""Recall while a large namespace's serving index builds: the postings read in small commands
(search/serving/chunked.py) answer exactly what search.lua answers, however writes land
between the reads, and search.lua (one long script at 300k) is not called."""

import logging
import random
import threading
import time

import pytest

from memories import services, store
from operations.reindex import reindex_namespace
from search import scoring
from search.index import fields as index_fields
from search.index import postings
from search.memory_search import memory_search
from search.serving import chunked
from search.serving import feed as serving
from tests.helpers import create, oracle_scores

pytestmark = pytest.mark.django_db

FIELD = index_fields.CONTENT
WORDS = ["harbor", "ferry", "tide", "gull", "pier", "anchor", "lantern", "rope", "storm"]


@pytest.fixture
def small_chunks(monkeypatch, caplog):
    """Chunks of 4 members, one list per round trip, no slack: many trips, overlapping
    reads; and every answer the chunks' own (search.lua never stood in)."""
    monkeypatch.setattr(chunked, "CHUNK", 4)
    monkeypatch.setattr(chunked, "PER_TRIP", 1)
    monkeypatch.setattr(chunked, "SLACK", 0)
    with caplog.at_level(logging.INFO, logger="search.serving.chunked"):
        yield
    assert "search.lua answers" not in caplog.text


def _corpus(n: int = 48) -> list[str]:
    rng, ids = random.Random(7), []
    for i in range(n):
        words = rng.choices(WORDS, k=1 + i % 6)  # repeats too: tf above 1
        kw = {}
        if i % 6 == 0:
            kw = {"type": "short_term", "conversation_id": f"conv-{i % 4}", "ttl_seconds": 600}
        ids.append(create(" ".join(words) + f" note {i}", **kw).memory_id)
    return ids


def _both(terms, *, mode="any", k=10, now=None, after_trip=None, **kw):
    now = time.time() if now is None else now
    client = store.get_client()
    args = {"user_id": "u-a", "field": FIELD, "terms": terms, "k": k, "k1": 1.2, "b": 0.75,
            "mode": mode, "now": now, **kw}
    got = chunked.search_field(client, after_trip=after_trip, **args)
    want = postings.search_field(client, **args)  # after the writes: the final state
    return got, want


def _same(got, want, *, ranked=True):
    assert (got.n_docs, got.total_len, got.df) == (want.n_docs, want.total_len, want.df)
    assert set(got.expired) == set(want.expired)
    if ranked:
        assert got.rows == want.rows
    else:
        assert sorted(got.rows) == sorted(want.rows)


@pytest.mark.parametrize("mode", ["any", "all", "collect"])
def test_it_answers_what_search_lua_answers(builtins, small_chunks, mode):
    _corpus()
    for query in (["harbor"], ["ferry", "tide"], ["gull", "storm", "rope", "harbor"],
                  ["note", "anchor"], ["absent", "pier"]):
        for k in (1, 5, 40):
            got, want = _both(query, mode=mode, k=k)
            _same(got, want, ranked=mode != "collect")
            if mode != "all" or len(query) == 1:
                assert got.rows, query


def test_type_and_conversation_filters_and_expiry_match_search_lua(builtins, small_chunks):
    _corpus()
    later = time.time() + 3600  # the short-term memories have expired by then
    for kw in ({"types": ["short_term"]}, {"conversation_id": "conv-2"},
               {"types": ["long_term"], "conversation_id": "conv-1"}):
        for now in (None, later):
            got, want = _both(["harbor", "tide", "note"], k=4, now=now, **kw)
            _same(got, want)
    got, want = _both(["note"], k=100, now=later)
    assert got.expired and got.n_docs == 40
    _same(got, want)


def test_other_bm25_parameters_are_scored_exactly(builtins, small_chunks):
    _corpus()
    client = store.get_client()
    got = chunked.search_field(client, user_id="u-a", field=FIELD, terms=["ferry", "gull"],
                               k=100, k1=2.0, b=0.3, mode="any", now=time.time())
    want = oracle_scores("u-a", "ferry gull", k1=2.0, b=0.3)
    assert {r[0] for r in got.rows} == set(want)


def test_writes_between_the_reads_are_seen_and_no_posting_is_skipped(builtins, small_chunks):
    """Deletes ahead of the read position move every later posting one rank up: without
    the margin the read skips them. Updates change postings already read; creates add ones."""
    ids = _corpus()
    ranked = [r[0] for r in _both(["harbor"], k=100)[0].rows]
    trips, fresh = [0], []

    def write():
        trips[0] += 1
        if trips[0] in (2, 3, 5):
            services.memory_forget(memory_id=ranked[trips[0]])  # behind the read position
        elif trips[0] == 4:
            services.memory_update(memory_id=ranked[0], content="harbor harbor harbor")
        elif trips[0] == 6:
            fresh.append(create("harbor tide lantern", type="short_term",
                                conversation_id="conv-9", ttl_seconds=600).memory_id)
        elif trips[0] == 7:
            services.memory_update(memory_id=ids[1], content="tide only now")

    got, want = _both(["harbor", "tide"], k=100, after_trip=write)
    assert trips[0] > 7  # every write landed during the read
    _same(got, want)
    answered = {r[0] for r in got.rows}
    assert fresh[0] in answered and not answered & set(ranked[2:4])
    oracle = oracle_scores("u-a", "harbor tide")
    assert answered == set(oracle)
    # The scores too, as a rebuild gives them (a small k, best first), under more writes.
    more = [0]

    def write_more():
        more[0] += 1
        if more[0] == 2:
            services.memory_update(memory_id=fresh[0], content="harbor tide tide note")
        elif more[0] == 3:
            create("tide harbor harbor")

    top = _both(["harbor", "tide"], k=5, after_trip=write_more)[0]
    assert more[0] > 3
    scores = {m: scoring.bm25(["harbor", "tide"], tf, dl, top.n_docs, top.df, top.avgdl)
              for m, dl, tf in top.rows}
    best = sorted(oracle_scores("u-a", "harbor tide").items(), key=lambda kv: (-kv[1], kv[0]))
    assert list(scores) == [m for m, _ in best[:5]]
    assert scores == pytest.approx(dict(best[:5]), abs=1e-9)


def test_a_reindex_during_the_read_reads_again(builtins, small_chunks):
    _corpus(24)
    swapped = []

    def swap():
        if not swapped:
            swapped.append(reindex_namespace("u-a"))

    got, want = _both(["ferry", "pier"], k=100, after_trip=swap)
    assert swapped
    _same(got, want)


def test_too_many_writes_during_every_read_leave_it_to_search_lua(builtins, monkeypatch,
                                                                  caplog):
    monkeypatch.setattr(chunked, "CHUNK", 4)  # three writes between two reads: too many
    monkeypatch.setattr(chunked, "PER_TRIP", 1)
    monkeypatch.setattr(chunked, "SLACK", 0)
    _corpus(24)
    n = [0]

    def burst():
        for _ in range(3):
            n[0] += 1
            create(f"gull burst {n[0]}")

    with caplog.at_level(logging.INFO, logger="search.serving.chunked"):
        got, want = _both(["gull"], k=100, after_trip=burst)
    assert "search.lua answers" in caplog.text
    # Each attempt: a chunk, a burst, the next chunk read again (its margin was short), a
    # burst, and then a margin of half a chunk: too many.
    assert n[0] == 6 * chunked.ATTEMPTS
    _same(got, want)


def test_a_recall_during_a_background_build_reads_chunks_not_search_lua(builtins, monkeypatch):
    monkeypatch.setattr(serving, "SYNC_BUILD_DOCS", 5)
    gate = threading.Event()
    real_build = serving._build

    def slow_build(*args):
        gate.wait(30)
        real_build(*args)

    monkeypatch.setattr(serving, "_build", slow_build)
    _corpus(30)

    def refuse(*args, **kwargs):
        raise AssertionError("search.lua was called")

    monkeypatch.setattr(postings, "search_field", refuse)
    try:
        for query in ("harbor tide", "gull storm rope"):
            found = memory_search(user_id="u-a", query=query, limit=100, profile="bm25")
            want = oracle_scores("u-a", query)
            assert {h.memory_id: h.score for h in found.results} == pytest.approx(want, abs=1e-9)
        mine = create("harbor lighthouse keeper").memory_id  # read-your-writes meanwhile
        found = memory_search(user_id="u-a", query="lighthouse", limit=5, profile="bm25")
        assert [h.memory_id for h in found.results] == [mine]
        served = serving._registry[(store.namespace_base("u-a"), FIELD)]
        assert served.index is None and served.thread is not None  # still building
    finally:
        gate.set()
        served = serving._registry.get((store.namespace_base("u-a"), FIELD))
        if served is not None and served.thread is not None:
            served.thread.join(30)  # not into the next test
