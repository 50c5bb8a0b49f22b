"""POST /recall: since / until / author / tags filters, and time words in the query used by the
profile's temporal setting (boost by default, filter with fallback, off for bm25)."""

import pytest

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

NOW = "2026-12-01T09:00:00+00:00"  # a Tuesday


def write(api, content, at, **kw):
    resp = api.post("/memories", {"user_id": "u-a", "content": content, "created_at": at,
                                  "importance": 0.5, **kw})
    assert resp.status_code == 201, resp.content
    return resp.json()["memory_id"]


def recall(api, query, **kw):
    resp = api.post("/recall", {"user_id": "u-a", "query": query, "now": NOW, **kw})
    assert resp.status_code == 200, resp.content
    return resp.json()


def ids(body):
    return [r["memory_id"] for r in body["results"]]


def test_since_until_author_and_tags_filter(api):
    old = write(api, "the deploy failed on redis timeout", "2026-10-01T10:00:00Z",
                author="zhang", tags=["ops"])
    new = write(api, "redis timeout again after the deploy", "2026-11-25T10:00:00Z",
                author="li", tags=["ops", "urgent"])
    assert set(ids(recall(api, "redis timeout"))) == {old, new}
    assert ids(recall(api, "redis timeout", since="2026-11-01T00:00:00Z")) == [new]
    assert ids(recall(api, "redis timeout", until="2026-11-01T00:00:00Z")) == [old]
    assert ids(recall(api, "redis timeout", author="zhang")) == [old]
    assert ids(recall(api, "redis timeout", tags=["ops", "urgent"])) == [new]
    assert ids(recall(api, "redis timeout", tags=["ops"], author="nobody")) == []


@pytest.mark.parametrize(("body", "field"), [
    ({"since": "last week"}, "since"),
    ({"until": "2026-13-01"}, "until"),
    ({"since": "2026-11-02T00:00:00Z", "until": "2026-11-01T00:00:00Z"}, "until"),
    ({"tags": "ops"}, "tags"),
    ({"now": "soon"}, "now"),
])
def test_bad_filters_are_400_naming_the_field(api, body, field):
    resp = api.post("/recall", {"user_id": "u-a", "query": "redis", **body})
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == field


def test_a_filter_finds_a_weak_match_beyond_the_candidate_window(api):
    import datetime as dt

    from memories import services

    jan = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    services.memory_create_many(items=[
        {"user_id": "u-a", "content": f"apple apple tart number {n}", "importance": 0.5,
         "created_at": jan} for n in range(130)])
    late = write(api, "one apple among many other words in a long sentence here",
                 "2026-11-30T10:00:00Z")
    body = recall(api, "apple", profile="bm25", since="2026-11-01T00:00:00Z", limit=3)
    assert ids(body) == [late]


def test_the_default_profile_boosts_the_named_month_and_drops_the_word(api):
    may = write(api, "Calvin: the studio flooded and we lost the mixing desk",
                "2026-05-14T10:00:00Z")
    march = write(api, "Calvin: the studio flooded, the mixing desk is gone",
                  "2026-03-14T10:00:00Z")
    verb = write(api, "you may come to the party", "2026-05-20T10:00:00Z")
    body = recall(api, "What did Calvin's studio go through in May?")
    assert body["time"] == {"range": "2026-05-01..2026-05-31", "from": "in May",
                            "mode": "boost", "applied": True}
    assert ids(body)[:2] == [may, march]
    # "may" is not a term: the verb's memory is there only as one of May's (the time term).
    (by_time,) = [r for r in body["results"] if r["memory_id"] == verb]
    assert by_time["explain"]["terms"] == {} and by_time["explain"]["time_term"] > 0
    first, second = body["results"][:2]
    assert first["explain"]["time"] == pytest.approx(1.5)
    assert 1.0 < second["explain"]["time"] < 1.5


def test_a_chinese_week_is_resolved_against_now(api):
    this = write(api, "张工提的 Redis 超时问题", "2026-11-25T03:00:00Z")
    earlier = write(api, "Redis 超时问题 复盘", "2026-10-10T03:00:00Z")
    body = recall(api, "张工上周提的那个 Redis 超时问题")
    assert body["time"]["range"] == "2026-11-23..2026-11-29"
    assert body["time"]["from"] == "上周"
    assert ids(body)[0] == this and earlier in ids(body)


def test_the_bm25_profile_parses_no_time(api):
    write(api, "you may come", "2026-05-20T10:00:00Z")
    body = recall(api, "in May", profile="bm25")
    assert body["time"] is None and len(body["results"]) == 1


@pytest.fixture
def filtering(admin_user):
    admin = ApiClient(admin_user)
    resp = admin.post("/profiles", {"name": "by-time", "stemming": True, "context": True,
                                    "temporal": "filter"})
    assert resp.status_code == 201, resp.content
    return admin


def test_a_filter_profile_keeps_the_range_and_falls_back_when_it_is_empty(filtering):
    api = filtering
    may = write(api, "studio flooded in spring", "2026-05-14T10:00:00Z")
    march = write(api, "studio flooded again", "2026-03-14T10:00:00Z")
    body = recall(api, "studio flooded in May", profile="by-time")
    assert ids(body) == [may]
    assert body["time"]["applied"] is True and body["time"]["mode"] == "filter"
    body = recall(api, "studio flooded in July", profile="by-time")
    assert set(ids(body)) == {may, march}
    assert body["time"]["applied"] is False


def test_a_query_that_is_only_a_date_lists_that_day_newest_first(api):
    a = write(api, "standup notes", "2026-11-30T09:00:00Z")
    b = write(api, "lunch with the team", "2026-11-30T12:00:00Z")
    write(api, "something else", "2026-11-28T12:00:00Z")
    body = recall(api, "yesterday")
    assert ids(body) == [b, a]
    assert body["time"]["range"] == "2026-11-30..2026-11-30"
    assert ids(recall(api, "昨天")) == [b, a]


def test_a_month_without_a_year_means_the_latest_before_the_newest_memory(api):
    # A history loaded from the past: its newest memory is in 2023.
    old_may = write(api, "trip to the coast", "2023-05-10T10:00:00Z")
    write(api, "trip to the mountains", "2023-03-10T10:00:00Z")
    write(api, "last note", "2023-06-01T10:00:00Z")
    body = recall(api, "trip in May")
    assert body["time"]["range"] == "2023-05-01..2023-05-31"
    assert ids(body)[0] == old_may


def test_an_explicit_year_stays_a_term_when_boosting(api):
    olympics = write(api, "2008年北京奥运会开幕", "2026-11-01T10:00:00Z")
    body = recall(api, "2008年奥运会在哪里举办")
    assert "2008年" in body["results"][0]["explain"]["terms"]
    assert ids(body) == [olympics]
    assert body["time"]["range"] == "2008-01-01..2008-12-31"


@pytest.mark.parametrize("now", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_a_now_at_the_ends_of_the_calendar_is_no_time_not_a_500(api, now):
    write(api, "standup notes", "2026-11-30T09:00:00Z")
    for query in ("yesterday standup", "next month", "上上周", "三天前"):
        resp = api.post("/recall", {"user_id": "u-a", "query": query, "now": now})
        assert resp.status_code == 200, (query, resp.content)


def test_a_memory_of_the_day_asked_about_is_found_without_a_shared_word(api):
    """The time range is a query term: "mood" is in no memory of 2 May, yet that day's turn
    comes first, above the days whose turns say "mood"."""
    day = write(api, "These days I've been feeling a bit down and anxious",
                "2026-05-02T20:00:00Z")
    for n in range(1, 4):
        write(api, f"My mood was fine, the mood of a quiet day {n}", f"2026-05-0{n + 3}T20:00:00Z")
    body = recall(api, "What was my mood on May 2nd?")
    assert body["time"]["range"] == "2026-05-02..2026-05-02"
    assert ids(body)[0] == day
    top = body["results"][0]["explain"]
    assert top["terms"] == {} and top["time_term"] > 0 and top["time"] == pytest.approx(1.5)


def test_a_range_holding_every_memory_adds_almost_nothing(api):
    a = write(api, "the harbour pilot boarded", "2026-05-02T20:00:00Z")
    b = write(api, "tea on the harbour wall", "2026-05-03T20:00:00Z")
    c = write(api, "harbour pilot harbour pilot log", "2026-05-04T20:00:00Z")
    body = recall(api, "harbour pilot in May")
    assert set(ids(body)) == {a, b, c}
    assert ids(body)[0] == c  # the text decides: each gets the same small time term
    terms = {r["explain"]["time_term"] for r in body["results"]}
    assert len(terms) == 1 and 0 < terms.pop() < 0.25


def test_our_first_conversation_is_the_day_of_the_oldest_memory(api):
    first = write(api, "Hello, my name is Ivy and I play badminton with colleagues",
                  "2026-04-27T20:00:00Z")
    write(api, "We talked about films today, a long talk", "2026-05-03T20:00:00Z")
    write(api, "Another talk about the weather", "2026-05-04T20:00:00Z")
    body = recall(api, "Do you remember what we talked about during our first conversation?")
    assert body["time"]["range"] == "2026-04-27..2026-04-27"
    assert ids(body)[0] == first
