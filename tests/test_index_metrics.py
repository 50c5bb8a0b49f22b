"""Tests for search.ranking_metrics (pure; no database, no Redis)."""

import math

import pytest

from search.ranking_metrics import (
    jaccard_at_k,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    rbo,
    recall_at_k,
)

GAINS = {"a": 3, "b": 2, "c": 1, "d": 0}


def test_it_computes_graded_ndcg_by_hand():
    # ranked d, a, c, b; k = 3; gain 2^g - 1, discount log2(rank + 1)
    # DCG@3  = 0/log2(2) + 7/log2(3) + 1/log2(4) = 0 + 4.4165083 + 0.5 = 4.9165083
    # IDCG@3 = 7/log2(2) + 3/log2(3) + 1/log2(4) = 7 + 1.8927893 + 0.5 = 9.3927893
    # nDCG@3 = 4.9165083 / 9.3927893 = 0.5234343
    dcg = 7 / math.log2(3) + 0.5
    idcg = 7 + 3 / math.log2(3) + 0.5
    assert dcg / idcg == pytest.approx(0.5234343216411389, rel=1e-12)
    assert ndcg_at_k(["d", "a", "c", "b"], GAINS, 3) == pytest.approx(0.5234343216411389, rel=1e-12)


def test_it_gives_ndcg_one_for_the_ideal_ranking():
    assert ndcg_at_k(["a", "b", "c", "d"], GAINS, 3) == pytest.approx(1.0)
    assert ndcg_at_k(["a", "b", "c"], GAINS, 10) == pytest.approx(1.0)


def test_it_gives_ndcg_zero_without_relevant_documents():
    assert ndcg_at_k(["x", "y"], GAINS, 2) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}, 1) == 0.0
    assert ndcg_at_k([], GAINS, 5) == 0.0


def test_it_counts_a_repeated_id_once_in_ndcg():
    # a, a, b -> a, b: the duplicate does not earn gain twice
    assert ndcg_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 2) == pytest.approx(1.0)


def test_it_computes_precision_at_k():
    assert precision_at_k(["d", "a", "c", "x"], GAINS, 4) == pytest.approx(0.5)
    # denominator stays k even when fewer results were retrieved
    assert precision_at_k(["a"], GAINS, 5) == pytest.approx(0.2)


def test_it_computes_recall_at_k():
    # relevant: a, b, c (d has grade 0)
    assert recall_at_k(["d", "a", "x", "c", "b"], GAINS, 3) == pytest.approx(1 / 3)
    assert recall_at_k(["d", "a", "x", "c", "b"], GAINS, 5) == pytest.approx(1.0)
    assert recall_at_k(["a"], {"a": 0}, 5) == 0.0


def test_it_computes_reciprocal_rank_within_k():
    assert mrr_at_k(["d", "x", "b"], GAINS, 3) == pytest.approx(1 / 3)
    assert mrr_at_k(["a"], GAINS, 1) == 1.0
    assert mrr_at_k(["d", "x", "b"], GAINS, 2) == 0.0


def test_it_rejects_a_non_positive_cutoff():
    with pytest.raises(ValueError):
        ndcg_at_k(["a"], GAINS, 0)
    with pytest.raises(ValueError):
        mrr_at_k(["a"], GAINS, -1)


def test_it_computes_jaccard_at_k():
    # top-3: {a, b, c} vs {b, c, d}: 2 shared / 4 total
    assert jaccard_at_k(["a", "b", "c", "z"], ["b", "d", "c"], 3) == pytest.approx(0.5)
    assert jaccard_at_k(["a"], ["b"], 1) == 0.0
    assert jaccard_at_k([], [], 3) == 1.0


def test_it_gives_rbo_one_for_identical_lists():
    assert rbo(["a", "b", "c", "d"], ["a", "b", "c", "d"]) == pytest.approx(1.0)
    assert rbo(["a"], ["a"], p=0.5) == pytest.approx(1.0)
    assert rbo([], []) == 1.0


def test_it_gives_rbo_zero_for_disjoint_lists():
    assert rbo(["a", "b", "c"], ["x", "y", "z"]) == 0.0
    assert rbo(["a", "b"], ["x", "y", "z", "w"]) == 0.0
    assert rbo(["a"], []) == 0.0


def test_it_matches_a_hand_computed_rbo_for_equal_lengths():
    # S = a b c, T = a c d, p = 0.9 (eq. 30 = eq. 32 with s = l = 3)
    # X1 = |{a} & {a}| = 1, X2 = |{a,b} & {a,c}| = 1, X3 = |{a,b,c} & {a,c,d}| = 2
    # RBO_ext = X3/3 * p^3 + (1-p)/p * (X1/1 p + X2/2 p^2 + X3/3 p^3)
    #         = 2/3*0.729 + (1/9) * (0.9 + 0.405 + 0.486)
    #         = 0.486 + 1.791/9 = 0.486 + 0.199 = 0.685
    assert rbo(["a", "b", "c"], ["a", "c", "d"], p=0.9) == pytest.approx(0.685)


def test_it_matches_a_hand_computed_rbo_for_uneven_lengths():
    # S = a b (s = 2), L = b a c (l = 3), p = 0.9, eq. 32:
    # X1 = 0, X2 = |{a,b} & {b,a}| = 2, X3 = |{a,b} & {b,a,c}| = 2; Xs = Xl = 2
    # sum_{d=1..3} Xd/d p^d       = 0 + 2/2*0.81 + 2/3*0.729 = 0.81 + 0.486 = 1.296
    # sum_{d=3..3} Xs(d-s)/(sd)p^d = 2*1/(2*3)*0.729 = 0.243
    # (1-p)/p * (1.296 + 0.243)    = 1.539/9 = 0.171
    # ((Xl-Xs)/l + Xs/s) p^l       = (0 + 1) * 0.729 = 0.729
    # RBO_ext = 0.171 + 0.729 = 0.9
    assert rbo(["a", "b"], ["b", "a", "c"], p=0.9) == pytest.approx(0.9)
    assert rbo(["b", "a", "c"], ["a", "b"], p=0.9) == pytest.approx(0.9)


def test_it_matches_the_published_rbo_example():
    # X1=0, X2=1, X3=2, X4=4, X5=5; p=0.9:
    # 5/5*0.59049 + (1/9)*(0 + 0.405 + 0.486 + 0.6561 + 0.59049) = 0.828
    assert rbo([1, 2, 3, 4, 5], [2, 3, 4, 1, 5], p=0.9) == pytest.approx(0.828)


def test_it_extrapolates_rbo_to_one_when_a_list_is_a_prefix():
    assert rbo(["a"], ["a", "b"]) == pytest.approx(1.0)
    assert rbo(["a", "b"], ["a", "b", "c", "d"], p=0.7) == pytest.approx(1.0)


def test_it_rejects_a_persistence_outside_zero_and_one():
    with pytest.raises(ValueError):
        rbo(["a"], ["a"], p=1.0)
    with pytest.raises(ValueError):
        rbo(["a"], ["a"], p=0.0)
