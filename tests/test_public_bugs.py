"""Faults users reported in comparable products (../shared/cases/public-bugs.md), each held
here as a test. Cases about sessions, pages and jobs live beside those features; cases B03,
B05, B15, B26 and B30 are in test_services.py, B09 (a) in test_api.py."""

import datetime as dt
import threading
import time

import pytest
from django.conf import settings
from django.db import connection

from memories import access, services, store
from memories.models import Memory
from search.analysis.tokenizer import tokenize
from search.memory_search import memory_search
from tests.helpers import (
    create,
    index_read,
    index_terms,
    indexed,
    memory_hash,
    oracle_scores,
    stats,
)

pytestmark = pytest.mark.django_db


def ids(found):
    return [h.memory_id for h in found.results]


def _servers(client) -> list:
    """The one server, or a plain client for every primary of a cluster."""
    if store.is_cluster(client):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


def test_b01_no_cross_user_leak_and_no_read_of_other_keys(builtins, redis_client):
    m = create("我的护照号码是 X1234567 passport", conversation_id="c-1")
    seen = []
    servers = _servers(redis_client)
    ready = [threading.Event() for _ in servers]

    def watch(server, monitor_ready):
        # MONITOR shows every client of the server: only this test's counts (another suite
        # on the same server, in a database of its own or in this one under its own key
        # prefix, e.g. the other pytest-xdist worker, has keys of a "{u-a}" too).
        db = int(server.connection_pool.connection_kwargs.get("db") or 0)
        ours = f"{settings.MEMORY_KEY_PREFIX}:"
        with server.monitor() as mon:
            monitor_ready.set()
            for cmd in mon.listen():
                if int(cmd.get("db") or 0) == db and ours in cmd["command"]:
                    seen.append(cmd["command"])
                if "STOP-WATCH" in cmd["command"]:
                    return

    watchers = [threading.Thread(target=watch, args=(server, event), daemon=True)
                for server, event in zip(servers, ready, strict=True)]
    for watcher, event in zip(watchers, ready, strict=True):
        watcher.start()
        event.wait(5)
    assert memory_search(user_id="u-b", query="passport 护照", conversation_id="c-9").results == []
    assert memory_search(user_id="u-b", query="passport 护照", conversation_id="c-1").results == []
    for server, watcher in zip(servers, watchers, strict=True):
        server.echo("STOP-WATCH")
        watcher.join(5)
    assert any("{u-b}" in c for c in seen), "the monitor saw the recall"
    assert not any("{u-a}" in c for c in seen)
    assert ids(memory_search(user_id="u-a", query="passport 护照", conversation_id="c-2")) == [
        m.memory_id]


def test_b08_lucene_idf_never_zero_or_negative(builtins):
    m1 = create("keyword1 keyword2 notes")
    m2 = create("keyword1 term1 notes")
    m3 = create("term1 term2 notes")
    m4 = create("plain notes")
    found = memory_search(user_id="u-a", query="keyword1 term1", limit=10, profile="bm25")
    assert ids(found)[0] == m2.memory_id
    assert set(ids(found)) == {m1.memory_id, m2.memory_id, m3.memory_id}
    assert all(h.score > 0 for h in found.results)
    idf = memory_search(user_id="u-a", query="keyword1", profile="bm25")
    hit = idf.results[0]
    # tf part of a 3-token doc with avgdl 2.75: 1 / (1 + 1.2 * (0.25 + 0.75 * 3 / 2.75))
    tf_part = 1 / (1 + 1.2 * (0.25 + 0.75 * 3 / 2.75))
    assert hit.explain.bm25 == pytest.approx(0.6931471805599453 * tf_part, abs=1e-12)
    notes = memory_search(user_id="u-a", query="notes", limit=10, profile="bm25")
    assert set(ids(notes)) == {m1.memory_id, m2.memory_id, m3.memory_id, m4.memory_id}
    assert all(h.score > 0 for h in notes.results)


def test_b09_tokenless_namespace_gives_empty_results(builtins):
    services.memory_create(user_id="u-a", content="🙂🙂")
    with pytest.raises(Exception):  # noqa: B017 - blank content is refused at save time
        services.memory_create(user_id="u-a", content="   ")
    assert memory_search(user_id="u-a", query="hello").results == []
    assert stats("u-a")["N"] == 0


def test_b11_chinese_is_split_into_bigrams(builtins):
    m1 = create("我明天要去杭州出差")
    create("周末和朋友去爬山")
    create("记得给妈妈打电话")
    assert ids(memory_search(user_id="u-a", query="杭州", profile="bm25")) == [m1.memory_id]
    assert memory_search(user_id="u-a", query="杭州", profile="bm25").results[0].score > 0
    assert ids(memory_search(user_id="u-a", query="出差杭州", profile="bm25"))[0] == m1.memory_id
    tokens = tokenize("我明天要去杭州出差")
    assert len(tokens) > 1 and "杭州" in tokens


def test_b12_no_empty_or_punctuation_terms(builtins):
    tokens = tokenize("请问VIP会员怎么续费？")
    assert "" not in tokens and "？" not in tokens and "vip" in tokens and "续费" in tokens
    m = create("请问VIP会员怎么续费？")
    # The index holds the words and nothing else: no empty or punctuation term, and a
    # document length that counts only the tokens.
    live = index_read("u-a", "vip", "续费", "", "？", field="c")
    assert live["df"] == {"vip": 1, "续费": 1, "": 0, "？": 0}
    assert live["total_len"] == len(tokens)
    assert ids(memory_search(user_id="u-a", query="VIP")) == [m.memory_id]


def test_b13_emoji_glued_to_words_round_trips(builtins):
    text = "🌱plants need water every 3 days🚿"
    m = create(text)
    assert ids(memory_search(user_id="u-a", query="plants")) == [m.memory_id]
    assert ids(memory_search(user_id="u-a", query="days")) == [m.memory_id]
    assert memory_search(user_id="u-a", query="🌱").results == []
    assert Memory.objects.get(pk=m.memory_id).content == text
    assert memory_hash("u-a", m.memory_id)["content"].encode() == text.encode()


def test_b17_ttl_survives_every_overwrite_and_expiry_cleans_postings(builtins, redis_client):
    m = create("short lived note about quokkas", type="short_term", ttl_seconds=60)
    key = store.key("u-a", "m", m.memory_id)
    services.memory_update(memory_id=m.memory_id, content="short lived note about wombats")
    assert 0 < redis_client.ttl(key) <= 60
    services.memory_update(memory_id=m.memory_id, importance=0.95)
    assert 0 < redis_client.ttl(key) <= 60
    access.access_record(user_id="u-a", memory_ids=[m.memory_id])
    assert memory_hash("u-a", m.memory_id)["access_count"] == "1"
    assert 0 < redis_client.ttl(key) <= 60
    expire_at = Memory.objects.get(pk=m.memory_id).expire_at.timestamp()
    assert float(memory_hash("u-a", m.memory_id)["expire_at"]) == pytest.approx(expire_at)
    assert abs(redis_client.ttl(key) - (expire_at - time.time())) <= 2


def test_b17_expired_memory_leaves_no_posting_after_real_expiry(admin_api):
    gone = create("fleeting thought about axolotls", type="short_term", ttl_seconds=1)
    assert indexed(admin_api, "u-a", "axolotls") == {gone.memory_id}
    time.sleep(1.1)
    assert memory_search(user_id="u-a", query="axolotls").results == []
    for field in ("c", "s", "xs"):
        live = index_terms(admin_api, "u-a", "axolotls", "axolotl", field=field)
        assert live["N"] == 0 and live["total_len"] == 0
        assert live["df"] == {"axolotls": 0, "axolotl": 0}
    access.access_record(user_id="u-a", memory_ids=[gone.memory_id])  # must not resurrect it
    assert not store.get_client().exists(store.key("u-a", "m", gone.memory_id))


@pytest.mark.parametrize("tz", ["UTC", "Asia/Shanghai"])
def test_b19_naive_and_aware_datetimes_mix(builtins, api, settings, tz):
    settings.TIME_ZONE = tz
    resp = api.post("/memories", {"user_id": "u-a", "content": "imported note on kayaks",
                                  "created_at": "2026-01-15T10:30:00"})
    assert resp.status_code == 201
    for _ in range(2):
        assert api.post("/recall", {"user_id": "u-a", "query": "kayaks"}).status_code == 200
    now = time.time()
    day_old = create("day old note on canoes",
                     created_at=dt.datetime.fromtimestamp(now - 86400, dt.UTC))
    hit = memory_search(user_id="u-a", query="canoes", profile="keyword", now=now).results[0]
    assert hit.memory_id == day_old.memory_id
    assert hit.explain.recency == pytest.approx(0.5 ** (24 / 168))


@pytest.mark.django_db(transaction=True)  # a real commit: threads read the rows
def test_b20_access_counts_exact_under_concurrent_recalls(builtins):
    m = create("popular memory about espresso")
    errors = []

    def bump():
        try:
            access.access_record(user_id="u-a", memory_ids=[m.memory_id])
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=bump) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert memory_hash("u-a", m.memory_id)["access_count"] == "50"
    assert access.access_fold() == {"namespaces": 1, "batches": 1, "hits": 50}
    assert Memory.objects.get(pk=m.memory_id).access_count == 50


@pytest.mark.parametrize("decode", [True, False])
def test_b25_same_results_with_and_without_decoded_responses(builtins, settings, decode):
    settings.MEMORY_REDIS_DECODE = decode
    a = create("redis client decode test alpha")
    create("redis client other beta")
    found = memory_search(user_id="u-a", query="alpha redis", profile="bm25")
    assert ids(found)[0] == a.memory_id
    assert isinstance(found.results[0].content, str)
    assert found.results[0].content == "redis client decode test alpha"
    want = oracle_scores("u-a", "alpha redis")
    assert {h.memory_id: h.score for h in found.results} == pytest.approx(want)
    assert "b'" not in repr(found.results[0].metadata)


def test_b16_every_write_path_dedups(builtins, api):
    lt = api.post("/memories", {"user_id": "u-a", "content": "User prefers dark mode"}).json()
    for _ in range(5):
        wk = api.post("/memories", {"user_id": "u-a", "content": "User prefers dark mode",
                                    "conversation_id": "c-1", "type": "working"}).json()
        resp = api.post(f"/memories/{wk['memory_id']}/promote", {"reason": "stable preference"})
        assert resp.status_code == 200 and resp.json()["deduplicated"] is True
        assert resp.json()["memory_id"] == lt["memory_id"]
    assert Memory.objects.filter(user_id="u-a", type="long_term").count() == 1
    found = memory_search(user_id="u-a", query="dark mode", types=["long_term"])
    assert len(found.results) == 1
    api.post("/sessions", {"user_id": "u-a", "session_id": "s-9"})
    api.post("/sessions/s-9/messages", {"role": "user", "content": "User prefers dark mode"})
    resp = api.post("/sessions/s-9/messages/1/promote")
    assert resp.status_code == 200 and resp.json()["memory_id"] == lt["memory_id"]
    fresh = api.post("/sessions/s-9/messages", {"role": "user", "content": "I live in Oslo"})
    assert fresh.status_code == 201
    made = api.post("/sessions/s-9/messages/2/promote")
    assert made.status_code == 201 and made.json()["conversation_id"] is None
    assert api.post("/sessions/s-9/messages/7/promote").status_code == 404
