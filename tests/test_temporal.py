"""search.temporal: a time window as a filter or a boost (pure)."""

import pytest

from search import temporal
from search.temporal import TimeWindow, boost_factor, in_window

DAY = 86400.0
WIN = TimeWindow(since=10 * DAY, until=11 * DAY, source="yesterday")


def test_the_window_is_half_open():
    assert in_window(10 * DAY, WIN)
    assert in_window(11 * DAY - 1, WIN)
    assert not in_window(11 * DAY, WIN)
    assert not in_window(10 * DAY - 1, WIN)


def test_boost_inside_is_one_plus_the_weight():
    assert boost_factor(10.5 * DAY, WIN, 0.5) == 1.5


def test_boost_outside_halves_per_window_length_on_both_sides():
    assert boost_factor(12 * DAY, WIN, 0.5) == pytest.approx(1.25)
    assert boost_factor(9 * DAY, WIN, 0.5) == pytest.approx(1.25)
    assert boost_factor(13 * DAY, WIN, 0.5) == pytest.approx(1.125)
    assert boost_factor(400 * DAY, WIN, 0.5) == pytest.approx(1.0)


def test_no_weight_no_boost():
    assert boost_factor(10.5 * DAY, WIN, 0.0) == 1.0


def test_an_empty_window_is_refused():
    with pytest.raises(ValueError):
        TimeWindow(since=5.0, until=5.0)


def test_the_time_term_weighs_a_narrow_range_like_a_rare_word():
    from search.scoring import idf

    assert temporal.time_term(100, 0, 1.2) == 0.0
    assert temporal.time_term(100, 4, 1.2) == pytest.approx(idf(100, 4) / 2.2)
    assert temporal.time_term(100, 4, 1.2) > temporal.time_term(100, 60, 1.2) > 0
    assert temporal.time_term(3, 5, 1.2) == pytest.approx(idf(5, 5) / 2.2)  # N lags the DB
    with pytest.raises(ValueError):
        temporal.time_term(-1, 0, 1.2)
