"""The search and compare pages take the recall filters (since, until, author, tags) and show
the time range a query named."""

import datetime as dt

import pytest

from tests.views.conftest import tags, text

pytestmark = pytest.mark.django_db


def hit_ids(body) -> list[str]:
    return [a["data-memory-id"] for t, a in tags(body) if t == "tr" and "data-memory-id" in a]


@pytest.fixture
def two(make_memory):
    old = make_memory("redis timeout on deploy", author="zhang", tags=["ops"],
                      created_at=dt.datetime(2026, 10, 1, 10, tzinfo=dt.UTC))
    new = make_memory("redis timeout again", author="li", tags=["ops", "urgent"],
                      created_at=dt.datetime(2026, 11, 25, 10, tzinfo=dt.UTC))
    return old.memory_id, new.memory_id


def test_the_search_page_filters(viewer_client, two):
    old, new = two
    base = {"user_id": "u-a", "q": "redis timeout", "profile": "bm25"}
    assert set(hit_ids(text(viewer_client.get("/search/", base)))) == {old, new}
    assert hit_ids(text(viewer_client.get("/search/", base | {"since": "2026-11-01"}))) == [new]
    assert hit_ids(text(viewer_client.get("/search/", base | {"until": "2026-10-01"}))) == [old]
    assert hit_ids(text(viewer_client.get("/search/", base | {"author": "zhang"}))) == [old]
    assert hit_ids(text(viewer_client.get("/search/", base | {"tags": "urgent, ops"}))) == [new]


def test_the_search_page_refuses_until_before_since(viewer_client, two):
    resp = viewer_client.get("/search/", {"user_id": "u-a", "q": "redis", "since": "2026-11-02",
                                          "until": "2026-11-01"})
    assert resp.status_code == 400 and "Until must not be before since." in text(resp)


def test_the_search_page_shows_the_time_a_query_named(viewer_client, make_memory):
    make_memory("studio flooded", created_at=dt.datetime(2026, 5, 3, tzinfo=dt.UTC))
    body = text(viewer_client.get("/search/", {"user_id": "u-a", "q": "studio flooded in May"}))
    assert "time: 2026-05-01..2026-05-31 from &lsquo;in May&rsquo;" in body
    assert "time ×1.50" in body


def test_the_compare_page_filters_both_sides(viewer_client, two):
    old, new = two
    resp = viewer_client.get("/search/compare/", {"user_id": "u-a", "q": "redis timeout",
                                                  "a": "bm25", "b": "keyword",
                                                  "author": "li"})
    body = text(resp)
    assert resp.status_code == 200
    assert new in body and old not in body
    assert 'name="author" value="li"' in body  # kept in the tuning form's state
