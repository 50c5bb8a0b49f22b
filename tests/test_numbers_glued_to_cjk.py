"""A number glued to a CJK character (issue #26): "会议室１０２周三可用" keeps the token "102周"
and is also indexed under the bare number "102" and the bigram "周三", so the queries "102",
"１０２" and "102周" all find it, through the analyzer and through POST /api/v1/recall; the
index written memory by memory equals a rebuild for such texts."""

import pytest

from memories import queue as job_queue
from memories import services, store
from operations.reindex import reindex_namespace
from search.analysis import tokenizer
from search.analysis.tokenizer import tokenize
from search.index import fields as index_fields
from search.index import postings
from search.memory_search import memory_search
from search.serving import feed as serving
from tests.conftest import work
from tests.helpers import create, index_read, oracle_scores, postings_of, stats


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("会议室１０２周三可用", ["会议", "议室", "102", "102周", "周三", "三可", "可用"]),
        ("价格：１００元", ["价格", "100", "100元", "元"]),
        ("007天", ["007", "7天", "天"]),
        ("房费12000元", ["房费", "12000", "12000元", "元"]),
    ],
)
def test_a_number_glued_to_a_unit_is_indexed_bare_and_with_its_unit(text, tokens):
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("会議室102号室", ["会議", "議室", "102", "102号", "号室"]),  # Japanese kanji
        ("3日間の出張", ["3", "3日", "日間", "間の", "の出", "出張"]),
        ("りんご3つ", ["りん", "んご", "3", "つ"]),  # kana after the number
        ("회의실102호", ["회의", "의실", "102", "호"]),  # Korean hangul
    ],
)
def test_japanese_and_korean_numbers_are_indexed_bare_too(text, tokens):
    assert tokenize(text) == tokens


def test_a_decimal_keeps_its_unit_on_the_whole_number():
    assert tokenize("３.５元") == ["3", "5", "3.5元", "元"]
    assert "5元" not in tokenize("3.5元")  # a price of 3.5 is not one of 5
    assert tokenize("1.2.3元") == ["1", "2", "3", "元"]  # a version is no number
    assert tokenize("３.５公里") == tokenize("3.5 公里") == ["3", "5", "公里"]


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("会议室１０２周三可用", "102"),
        ("会议室１０２周三可用", "１０２"),
        ("会议室１０２周三可用", "102周"),
        ("会议室102周三可用", "１０２周"),
        ("会议室１０２周三可用", "周三"),
        ("价格：１００元", "１００"),
        ("价格：１００元", "100元"),
        ("全程３.５公里", "3.5"),
        ("单价３.５元", "3.5"),
        ("会議室102号室", "102"),
        ("3日間の出張", "3"),
    ],
)
def test_a_query_of_the_bare_number_or_the_number_with_its_unit_shares_a_term(text, query):
    assert set(tokenize(query)) & set(tokenize(text)), (text, query)


def test_a_year_is_indexed_bare_too_and_a_month_and_day_stay_one_token():
    assert tokenize("2025年4月27号开会") == ["2025", "2025年", "4月27日", "开会"]
    assert tokenize("工作了5年") == ["工作", "5", "5年"]
    assert set(tokenize("2025")) & set(tokenize("２０２５年的预算"))


def test_a_number_longer_than_int_converts_is_still_tokenized():
    digits = "1" * 5000
    assert tokenize(digits + "元") == [digits, digits + "元", "元"]


# --- through the API and the index ---------------------------------------------------------


def _remember(api, content):
    resp = api.post("/memories", {"user_id": "u-a", "content": content})
    assert resp.status_code == 201, resp.content
    return resp.json()["memory_id"]


def _recall(api, query):
    resp = api.post("/recall", {"user_id": "u-a", "query": query, "limit": 10,
                                "profile": "bm25"})
    assert resp.status_code == 200, resp.content
    return [hit["memory_id"] for hit in resp.json()["results"]]


@pytest.mark.django_db
def test_recall_finds_a_number_glued_to_a_unit_by_the_bare_number(api, builtins):
    room = _remember(api, "会议室１０２周三可用")
    price = _remember(api, "价格：１００元")
    distance = _remember(api, "全程３.５公里，单价３.５元")
    japanese = _remember(api, "会議室102号室は空いています")
    _remember(api, "会议室２０１下午有人")
    for query in ("102", "１０２"):
        assert set(_recall(api, query)) == {room, japanese}, query
    for query in ("102周", "１０２周"):  # the glued token ranks the room first
        assert _recall(api, query) == [room, japanese], query
    for query in ("100", "１００"):
        assert _recall(api, query) == [price], query
    assert _recall(api, "100元") == [price, distance]  # "元" alone is a term as well
    assert _recall(api, "3.5") == [distance]


@pytest.mark.django_db
def test_the_index_of_numbers_glued_to_cjk_equals_a_rebuild(api, builtins):
    texts = ["会议室１０２周三可用", "价格：１００元", "全程３.５公里，单价３.５元", "他18岁，3天前到",
             "会議室102号室", "회의실102호", "第2号楼１０２室"]
    ids = [_remember(api, text) for text in texts]
    services.memory_update(memory_id=ids[1], content="价格：１２０元，原价１００元")
    services.memory_forget(memory_id=ids[3])
    queries = ["102", "１００元", "3.5", "周三", "18岁", "120"]
    terms = {t for text in texts + ["价格：１２０元，原价１００元"] for t in tokenize(text)}
    fields = list(index_fields.ANALYZERS)

    def snapshot():
        live = {f: index_read("u-a", *sorted(terms), field=f) for f in fields}
        return ({f: (stats("u-a", f)["N"], stats("u-a", f)["total_len"], live[f]["N"],
                     live[f]["total_len"]) for f in fields},
                {(f, t): set(live[f]["postings"][t]) for f in fields for t in terms},
                {q: _scores(api, q) for q in queries})

    incremental = snapshot()
    assert incremental[1][(index_fields.CONTENT, "102")] == {ids[0], ids[4], ids[5], ids[6]}
    assert incremental[1][(index_fields.CONTENT, "100")] == {ids[1]}
    assert incremental[1][(index_fields.CONTENT, "周三")] == {ids[0]}
    reindex_namespace("u-a")
    serving.clear()
    rebuilt = snapshot()
    assert incremental[0] == rebuilt[0] and incremental[1] == rebuilt[1]
    for query in queries:
        want = oracle_scores("u-a", query)
        assert incremental[2][query].keys() == rebuilt[2][query].keys() == want.keys(), query
        for memory_id, value in want.items():
            assert incremental[2][query][memory_id] == pytest.approx(value, abs=1e-9)
            assert rebuilt[2][query][memory_id] == pytest.approx(value, abs=1e-9)


def _scores(api, query):
    resp = api.post("/recall", {"user_id": "u-a", "query": query, "limit": 100,
                                "profile": "bm25"})
    return {hit["memory_id"]: hit["score"] for hit in resp.json()["results"]}


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_an_index_of_the_analysis_before_bare_numbers_upgrades_itself(
        builtins, redis_client, empty_queues, monkeypatch):
    """Memories indexed by format 3 hold "102周" without "102": the namespace's older stamp
    queues one reindex, after which the bare number finds them."""
    with monkeypatch.context() as old_analysis:
        old_analysis.setattr(tokenizer, "_number_tokens", lambda number, unit: [number + unit])
        room = create("会议室１０２周三可用").memory_id
    assert postings_of("u-a", "102") == set()
    redis_client.set(store.key("u-a", "format"), "3")

    def found(query):
        return [h.memory_id for h in memory_search(user_id="u-a", query=query, limit=10,
                                                   profile="bm25").results]

    assert found("102周") == [room]  # the old index is served meanwhile ...
    assert found("102") == []
    assert job_queue.get_queue("index").count == 1  # ... and one upgrade is queued
    work()
    assert store.text(redis_client.get(store.key("u-a", "format"))) == postings.INDEX_FORMAT
    assert found("102") == [room]
