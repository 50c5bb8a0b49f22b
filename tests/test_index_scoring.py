"""Tests for search.scoring (pure; no database, no Redis)."""

import math

import pytest

from search.scoring import bm25, bm25_terms, hybrid, idf, recency, tf_part

# A 3-document corpus, already tokenized:
#   d1 = cat sat mat                 dl = 3
#   d2 = dog sat log dog             dl = 4
#   d3 = cat dog bird bird bird      dl = 5
# N = 3, avgdl = 12 / 3 = 4.0
# df: cat 2, sat 2, dog 2, mat 1, log 1, bird 1
DOCS = {
    "d1": {"cat": 1, "sat": 1, "mat": 1},
    "d2": {"dog": 2, "sat": 1, "log": 1},
    "d3": {"cat": 1, "dog": 1, "bird": 3},
}
DL = {"d1": 3, "d2": 4, "d3": 5}
N = 3
AVGDL = 4.0
DF = {"cat": 2, "sat": 2, "dog": 2, "mat": 1, "log": 1, "bird": 1}

# idf(3, 1) = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(1 + 2.5/1.5) = ln(2.6667)
IDF_RARE = 0.9808292530117263
# idf(3, 2) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1 + 1.5/2.5) = ln(1.6)
IDF_COMMON = 0.47000362924573563


def _score_terms(query, doc):
    return bm25_terms(query, DOCS[doc], DL[doc], N, DF, AVGDL)


def test_it_computes_idf_like_lucene():
    assert idf(3, 1) == pytest.approx(IDF_RARE, rel=1e-12)
    assert idf(3, 2) == pytest.approx(IDF_COMMON, rel=1e-12)
    # idf(4, 2) = ln(1 + 2.5/2.5) = ln 2
    assert idf(4, 2) == pytest.approx(math.log(2), rel=1e-12)


def test_it_never_returns_a_negative_idf():
    # df == N: ln(1 + 0.5/3.5) = ln(1.142857) = 0.133531...
    assert idf(3, 3) == pytest.approx(0.13353139262452257, rel=1e-12)
    for n in range(0, 50):
        for df in range(0, n + 1):
            assert idf(n, df) > 0


def test_it_rejects_an_impossible_document_frequency():
    with pytest.raises(ValueError):
        idf(3, 4)
    with pytest.raises(ValueError):
        idf(3, -1)
    with pytest.raises(ValueError):
        idf(-1, 0)


def test_it_computes_the_saturated_term_frequency():
    # d1: k1*(1 - b + b*dl/avgdl) = 1.2 * (0.25 + 0.75*3/4) = 1.2 * 0.8125 = 0.975
    assert tf_part(1, 3, 4.0) == pytest.approx(1 / 1.975, rel=1e-12)
    # dl == avgdl: norm = k1 = 1.2, tf 2 -> 2 / 3.2 = 0.625
    assert tf_part(2, 4, 4.0) == pytest.approx(0.625, rel=1e-12)
    # b = 0: no length normalisation, 1 / (1 + 1.2)
    assert tf_part(1, 100, 4.0, b=0.0) == pytest.approx(1 / 2.2, rel=1e-12)


def test_it_returns_zero_tf_part_for_an_empty_corpus_or_absent_term():
    assert tf_part(1, 3, 0.0) == 0.0
    assert tf_part(0, 3, 4.0) == 0.0


def test_it_rejects_bad_tf_part_arguments():
    with pytest.raises(ValueError):
        tf_part(-1, 3, 4.0)
    with pytest.raises(ValueError):
        tf_part(1, 3, 4.0, b=1.5)
    with pytest.raises(ValueError):
        tf_part(1, 3, 4.0, k1=-0.1)


def test_it_scores_the_hand_computed_corpus():
    # d1, query "cat mat": tf_part = 1 / (1 + 0.975) = 0.5063291
    #   cat: 0.4700036 * 0.5063291 = 0.2379765
    #   mat: 0.9808293 * 0.5063291 = 0.4966224
    #   sum = 0.7345989
    terms = _score_terms(["cat", "mat"], "d1")
    assert terms["cat"] == pytest.approx(0.23797652113708131, rel=1e-9)
    assert terms["mat"] == pytest.approx(0.4966224065882158, rel=1e-9)
    assert bm25(["cat", "mat"], DOCS["d1"], 3, N, DF, AVGDL) == pytest.approx(
        0.7345989277252971, rel=1e-9
    )

    # d3, query "bird dog": norm = 1.2 * (0.25 + 0.75*5/4) = 1.2 * 1.1875 = 1.425
    #   bird (tf 3): 0.9808293 * 3 / 4.425 = 0.9808293 * 0.6779661 = 0.6649690
    #   dog  (tf 1): 0.4700036 * 1 / 2.425 = 0.4700036 * 0.4123711 = 0.1938159
    #   sum = 0.8587849
    terms = _score_terms(["bird", "dog"], "d3")
    assert terms["bird"] == pytest.approx(0.6649689850926959, rel=1e-9)
    assert terms["dog"] == pytest.approx(0.19381592958587038, rel=1e-9)
    assert bm25(["bird", "dog"], DOCS["d3"], 5, N, DF, AVGDL) == pytest.approx(
        0.8587849146785662, rel=1e-9
    )

    # d2, query "dog": dl == avgdl, norm = 1.2; tf 2 -> 2/3.2 = 0.625
    #   0.4700036 * 0.625 = 0.2937523
    assert bm25(["dog"], DOCS["d2"], 4, N, DF, AVGDL) == pytest.approx(
        0.29375226827858475, rel=1e-9
    )


def test_it_ranks_the_corpus_as_expected():
    query = ["bird", "dog"]
    scores = {d: bm25(query, DOCS[d], DL[d], N, DF, AVGDL) for d in DOCS}
    assert sorted(scores, key=scores.get, reverse=True) == ["d3", "d2", "d1"]
    assert scores["d1"] == 0.0


def test_it_counts_each_distinct_query_term_once():
    once = _score_terms(["cat", "mat"], "d1")
    repeated = _score_terms(["cat", "mat", "cat", "cat"], "d1")
    assert once == repeated
    assert list(repeated) == ["cat", "mat"]


def test_it_leaves_out_terms_missing_from_the_document():
    terms = _score_terms(["cat", "unicorn", "bird"], "d1")
    assert set(terms) == {"cat"}


def test_it_sums_contributions_to_the_bm25_score():
    for doc in DOCS:
        query = ["cat", "dog", "bird", "sat", "mat", "log"]
        terms = _score_terms(query, doc)
        assert sum(terms.values()) == pytest.approx(
            bm25(query, DOCS[doc], DL[doc], N, DF, AVGDL), rel=1e-12
        )


def test_it_halves_recency_every_half_life():
    assert recency(0, 24) == 1.0
    assert recency(24 * 3600, 24) == pytest.approx(0.5)
    assert recency(48 * 3600, 24) == pytest.approx(0.25)
    assert recency(12 * 3600, 24) == pytest.approx(math.sqrt(0.5))


def test_it_clamps_recency_for_future_and_ancient_dates():
    assert recency(-3600, 24) == 1.0
    assert recency(float("inf"), 24) == 0.0
    assert 0.0 <= recency(10**9, 1) <= 1.0


def test_it_rejects_a_non_positive_half_life():
    with pytest.raises(ValueError):
        recency(10, 0)
    with pytest.raises(ValueError):
        recency(10, -1)


def test_it_blends_hybrid_scores_with_weights():
    # 0.6*0.5 + 0.3*1.0 + 0.1*0.2 = 0.3 + 0.3 + 0.02 = 0.62
    assert hybrid(0.5, 1.0, 0.2, 0.6, 0.3, 0.1) == pytest.approx(0.62)
    assert hybrid(1.0, 1.0, 1.0, 0.5, 0.3, 0.2) == pytest.approx(1.0)
    assert hybrid(0.0, 0.0, 0.0, 0.5, 0.3, 0.2) == 0.0
