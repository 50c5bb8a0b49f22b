"""Recall: exact BM25 against an oracle computed from the database, match modes, filters,
explain, empty queries, and incremental index == full rebuild."""

import random

import pytest

from memories import services
from memories.history import rollback_targets
from memories.models import Memory
from search.index import fields as index_fields
from search.memory_search import memory_search
from tests.helpers import create, oracle_scores, stats

pytestmark = pytest.mark.django_db


def scores(user_id, query, limit=100, **kw):
    return {h.memory_id: h.score for h in memory_search(
        user_id=user_id, query=query, limit=limit, profile="bm25", **kw).results}


def test_it_matches_the_oracle_on_a_small_corpus(builtins):
    for text in ["the quick brown fox", "quick quick fox jumps", "lazy dog sleeps",
                 "brown dog and brown fox", "fox"]:
        create(text)
    for query in ["quick fox", "brown", "dog fox", "fox"]:
        got, want = scores("u-a", query), oracle_scores("u-a", query)
        assert got.keys() == want.keys()
        for memory_id, value in want.items():
            assert got[memory_id] == pytest.approx(value, abs=1e-9)


def test_it_explains_terms_that_add_up_to_bm25(builtins):
    create("redis memory eviction caused login failures")
    create("login page redesign")
    (hit, *_) = memory_search(user_id="u-a", query="login failures", profile="bm25").results
    assert set(hit.explain.terms) == {"login", "failures"}
    assert sum(hit.explain.terms.values()) == pytest.approx(hit.explain.bm25, abs=1e-12)
    assert hit.score == pytest.approx(hit.explain.bm25)


def test_it_returns_results_sorted_with_ties_broken_by_id(builtins):
    ids = sorted(create(f"same words here {n}").memory_id for n in range(6))
    found = memory_search(user_id="u-a", query="words", limit=6, profile="bm25").results
    assert [h.memory_id for h in found] == ids
    assert len({h.score for h in found}) == 1


@pytest.mark.parametrize("query", ["", "   ", "the and of", "?!.,", "🙂🙂", "的了"])
def test_it_returns_nothing_for_a_query_without_usable_tokens(builtins, query):
    create("something to find")
    assert memory_search(user_id="u-a", query=query).results == []


def test_it_applies_match_modes(builtins):
    both = create("redis cluster failover drill")
    create("redis memory usage")
    create("cluster of servers")
    all_ = memory_search(user_id="u-a", query="redis cluster", limit=5, match_mode="all",
                         profile="bm25")
    assert [h.memory_id for h in all_.results] == [both.memory_id]
    assert all_.match_mode_used == "all"
    any_ = memory_search(user_id="u-a", query="redis cluster", limit=5, match_mode="any",
                         profile="bm25")
    assert len(any_.results) == 3 and any_.results[0].memory_id == both.memory_id
    fallback = memory_search(user_id="u-a", query="redis cluster", limit=2,
                             match_mode="all_then_any", profile="bm25")
    assert fallback.match_mode_used == "any" and len(fallback.results) == 2
    enough = memory_search(user_id="u-a", query="redis cluster", limit=1,
                           match_mode="all_then_any", profile="bm25")
    assert enough.match_mode_used == "all"
    assert [h.memory_id for h in enough.results] == [both.memory_id]


def test_it_filters_by_type_and_conversation(builtins):
    lt = create("budget review notes", conversation_id="c-1")
    wk = create("budget draft in progress", conversation_id="c-1", type="working")
    other = create("budget for another chat", conversation_id="c-2", type="working")
    ids = lambda **kw: {h.memory_id for h in memory_search(  # noqa: E731
        user_id="u-a", query="budget", limit=10, **kw).results}
    assert ids() == {lt.memory_id, wk.memory_id, other.memory_id}
    assert ids(conversation_id="c-1") == {lt.memory_id, wk.memory_id}
    # Long-term memories cross conversations; working ones do not.
    assert ids(conversation_id="c-3") == {lt.memory_id}
    assert ids(types=["working"]) == {wk.memory_id, other.memory_id}


def test_it_uses_the_stemmed_field_for_a_stemming_profile(builtins):
    m = create("the deployments were running late")
    assert memory_search(user_id="u-a", query="deployment run", profile="bm25").results == []
    found = memory_search(user_id="u-a", query="deployment run", profile="stemmed").results
    assert [h.memory_id for h in found] == [m.memory_id]


def test_it_ranks_by_the_keyword_formula(builtins):
    a = create("alpha beta gamma", importance=0.1)
    b = create("alpha beta", importance=0.9)
    found = memory_search(user_id="u-a", query="alpha beta", profile="keyword").results
    assert [h.memory_id for h in found] == [b.memory_id, a.memory_id]
    top = found[0]
    assert top.explain.relevance == 1.0
    assert top.score == pytest.approx(0.5 * 1.0 + 0.3 * top.explain.recency + 0.2 * 0.9)


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "redis", "cluster", "memory", "杭州", "出差", "北京"]


def _random_text(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_it_equals_a_full_rebuild_after_any_sequence_of_writes(builtins, seed):
    """Creates, updates, forgets, restores and rollbacks in random order: every score equals
    BM25 computed from the database alone (what a rebuild gives) to 1e-9."""
    rng = random.Random(seed)
    live = []
    for _ in range(60):
        op = rng.random()
        if op < 0.4 or not live:
            live.append(create(_random_text(rng)).memory_id)
        elif op < 0.6:
            target = rng.choice(live)
            if Memory.objects.get(pk=target).deleted_at is None:
                services.memory_update(memory_id=target, content=_random_text(rng))
        elif op < 0.75:
            services.memory_forget(memory_id=rng.choice(live))
        elif op < 0.9:
            services.memory_restore(memory_id=rng.choice(live))
        else:
            memory_id = rng.choice(live)
            targets = rollback_targets(Memory.objects.get(pk=memory_id))
            if targets:
                services.memory_rollback(memory_id=memory_id, version=rng.choice(targets),
                                         reason="test")
    rows = Memory.objects.filter(user_id="u-a", deleted_at__isnull=True)
    analyzer = index_fields.ANALYZERS[index_fields.CONTENT]
    tfs = [analyzer.term_frequencies(m.content) for m in rows]
    assert stats("u-a")["N"] == sum(1 for t in tfs if t)
    assert stats("u-a")["total_len"] == sum(sum(t.values()) for t in tfs)
    for _ in range(15):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        got, want = scores("u-a", query, limit=100), oracle_scores("u-a", query)
        assert got.keys() == want.keys(), query
        for memory_id, value in want.items():
            assert got[memory_id] == pytest.approx(value, abs=1e-9)


def test_it_finds_the_exact_top_k_of_a_large_namespace(builtins):
    """Early termination must still give the oracle's top k (ties by id)."""
    rng = random.Random(7)
    services.memory_create_many(items=[{"user_id": "u-big", "content": _random_text(rng)}
                                       for _ in range(600)])
    for query in ["alpha", "alpha beta", "redis cluster memory", "杭州 alpha"]:
        for k in (1, 5, 20):
            want = sorted(oracle_scores("u-big", query).items(), key=lambda kv: (-kv[1], kv[0]))[:k]
            got = memory_search(user_id="u-big", query=query, limit=k, profile="bm25").results
            assert [h.memory_id for h in got] == [m for m, _ in want], (query, k)
            for h, (_, value) in zip(got, want, strict=True):
                assert h.score == pytest.approx(value, abs=1e-9)


def test_it_finds_a_memory_through_its_context_and_says_so(builtins):
    from search.models import RankingProfile

    RankingProfile.objects.create(name="ctx", stemming=True, context=True)
    reply = create("Yes, I went there last spring!",
                   context="Caroline: Have you ever been to Lisbon?", conversation_id="s1")
    other = create("Lisbon trams are yellow", user_id="u-b", context="")
    assert memory_search(user_id="u-a", query="Lisbon", profile="stemmed").results == []
    (hit,) = memory_search(user_id="u-a", query="Lisbon", profile="ctx").results
    assert hit.memory_id == reply.memory_id and hit.explain.context_terms == ["lisbon"]
    assert [h.memory_id for h in memory_search(user_id="u-b", query="Lisbon",
                                               profile="ctx").results] == [other.memory_id]
