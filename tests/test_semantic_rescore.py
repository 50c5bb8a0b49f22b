"""search.semantic.rescore: BM25 + cosine score mix (pure)."""

import pytest

from search.semantic.rescore import mix


def test_zero_weight_keeps_the_bm25_order():
    assert mix([4.0, 2.0, 1.0], [0.1, 0.9, 0.5], 0.0) == [1.0, 0.5, 0.25]


def test_the_cosine_can_lift_a_lower_bm25_match():
    scores = mix([4.0, 3.0], [0.1, 0.9], 0.5)
    assert scores[1] > scores[0]
    assert scores == pytest.approx([0.55, 0.825])


def test_a_memory_without_an_embedding_gets_the_mean_cosine():
    assert mix([2.0, 2.0, 2.0], [0.2, None, 0.6], 0.5) == pytest.approx([0.6, 0.7, 0.8])


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        mix([1.0], [0.1, 0.2], 0.5)
    with pytest.raises(ValueError):
        mix([1.0], [0.1], 1.5)
    assert mix([], [], 0.5) == []
