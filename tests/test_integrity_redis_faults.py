"""Search state that lies (issue 13): a write whose Redis mirror failed (Redis paused with
``CLIENT PAUSE … WRITE``, or full: maxmemory + noeviction) answers its normal status with
``"warning": "index_pending"`` (DELETE, a 204, in the ``X-Warning`` header), and no read
serves the state the database has left: a forgotten memory is never recalled, a changed
importance is never stale. While Redis is full every API route still answers (reads from the
database and the serving index); a read that could not be served at all would answer 503
``redis_full``.

Each test runs its own ``redis-server`` on a spare port (tests/own_redis.py): pausing or
filling the shared test Redis would disturb every other run.
"""

import json
import threading
import time

import pytest

from api.core import redis_error_response
from memories import store
from tests.conftest import work
from tests.own_redis import fill_up, hot_store_at, make_room, redis_server

pytestmark = pytest.mark.django_db

PAUSE_MS = 8000


@pytest.fixture
def own(settings, tmp_path):
    """The hot store on a server of this test's own: yields its (raw) client."""
    with redis_server(tmp_path) as (url, client), hot_store_at(settings, url):
        yield client


def _recall(api, query: str, **extra) -> dict:
    answer = api.post("/recall", {"user_id": "team-a", "query": query, "limit": 10, **extra})
    assert answer.status_code == 200, answer.content
    return answer.json()


def _ids(body: dict) -> list[str]:
    return [r["memory_id"] for r in body["results"]]


def _two_memories(api) -> tuple[str, str]:
    gone = api.post("/memories", {"user_id": "team-a", "importance": 0.5,
                                  "content": "kumquat marmalade recipe from grandma"})
    kept = api.post("/memories", {"user_id": "team-a", "importance": 0.5,
                                  "content": "the kumquat tree needs sun"})
    assert gone.status_code == kept.status_code == 201
    assert "warning" not in gone.json()
    return gone.json()["memory_id"], kept.json()["memory_id"]


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_forget_while_redis_is_full_is_never_recalled(own, admin_api):
    gone, kept = _two_memories(admin_api)
    assert set(_ids(_recall(admin_api, "kumquat"))) == {gone, kept}
    fill_up(own)
    answer = admin_api.delete(f"/memories/{gone}")
    assert answer.status_code == 204
    assert answer.headers.get("X-Warning") == "index_pending"
    found = _recall(admin_api, "kumquat")
    assert gone not in _ids(found) and kept in _ids(found)
    # The memory's own state says the same.
    assert admin_api.get(f"/memories/{gone}").json()["deleted_at"] is not None
    ready = admin_api.get(f"/memories/{gone}/ready")
    assert ready.status_code == 200 and ready.json()["ready"] is False
    # Once there is room again the reconcile repairs the index, and the answer holds.
    make_room(own)
    admin_api.post("/index/reconcile")
    work()
    assert admin_api.get("/index/health?refresh=1").json()["drift"] == 0
    assert _ids(_recall(admin_api, "kumquat")) == [kept]


def test_a_patched_importance_is_never_stale_while_redis_is_full(own, admin_api):
    gone, kept = _two_memories(admin_api)
    fill_up(own)
    answer = admin_api.patch(f"/memories/{kept}", {"importance": 0.95})
    assert answer.status_code == 200 and answer.json()["warning"] == "index_pending"
    assert answer.headers.get("X-Warning") == "index_pending"
    for profile in (None, "keyword"):
        found = _recall(admin_api, "kumquat", **({"profile": profile} if profile else {}))
        row = next(r for r in found["results"] if r["memory_id"] == kept)
        assert row["importance"] == 0.95, (profile, row)
        assert row["version"] == 2
    # A rollback (admin) and a restore during the outage are never served stale either.
    admin_api.delete(f"/memories/{gone}")
    assert gone not in _ids(_recall(admin_api, "kumquat"))
    restored = admin_api.post(f"/memories/{gone}/restore", {"reason": "back"})
    assert restored.status_code == 200 and restored.json()["warning"] == "index_pending"


def test_a_purge_while_redis_is_full_is_never_recalled(own, admin_api):
    gone, kept = _two_memories(admin_api)
    fill_up(own)
    answer = admin_api.delete(f"/memories/{gone}?purge=1")
    assert answer.status_code == 204
    assert answer.headers.get("X-Warning") == "index_pending"
    assert _ids(_recall(admin_api, "kumquat")) == [kept]


def test_writes_while_redis_is_full_say_so_and_reads_that_need_it_say_redis_full(own,
                                                                               admin_api):
    gone, kept = _two_memories(admin_api)
    fill_up(own)
    created = admin_api.post("/memories", {"user_id": "team-a", "content": "written when full"})
    assert created.status_code == 201 and created.json()["warning"] == "index_pending"
    # A full Redis degrades, never fails: reads are served from the database and the
    # serving index, writes land in the database (marked for resync).
    admin_api.client.raise_request_exception = False
    statuses = {}
    for method, path, body in [
        ("post", "/recall", {"user_id": "team-a", "query": "kumquat"}),
        ("get", f"/memories/{kept}/ready", None),
        ("get", "/index/health", None),
        ("get", f"/memories/{kept}", None),
        ("post", "/sessions", {"user_id": "team-a", "session_id": "s-full"}),
        ("post", "/sessions/s-full/messages", {"role": "user", "content": "hi"}),
        ("get", "/sessions/s-full/context", None),
    ]:
        statuses[path] = admin_api.call(method, path, body).status_code
    assert all(200 <= status < 300 for status in statuses.values()), statuses


def test_a_request_redis_refused_for_memory_answers_503_redis_full(rf):
    """The last resort, for a read that cannot be served without Redis: full is named full."""
    full = redis_error_response(rf.get("/api/v1/recall"), store.OutOfMemoryError("OOM"))
    down = redis_error_response(rf.get("/api/v1/recall"), store.RedisError("gone"))
    assert full.status_code == down.status_code == 503
    assert json.loads(full.content)["error"]["code"] == "redis_full"
    assert json.loads(down.content)["error"]["code"] == "unavailable"


def test_a_full_redis_is_named_full_on_pages_in_health_and_in_503s(own, admin_api,
                                                                   admin_role_client):
    """A full Redis answers PING: it is not "unreachable". The console's banner, the health
    document and any answer Redis refused because it is full say so."""
    admin_api.post("/sessions", {"user_id": "team-a", "session_id": "s-full"})
    admin_api.post("/sessions/s-full/messages", {"role": "user", "content": "hello"})
    own.flushall()  # the session window is cold now
    fill_up(own)
    page = admin_role_client.get("/").content.decode()
    assert 'id="redis-banner"' in page and "Redis is full" in page
    health = admin_api.get("/index/health")
    assert health.status_code == 200 and health.json()["redis"]["full"] is True
    # The API serves a cold session window from the transcript when Redis cannot take it.
    cold = admin_api.get("/sessions/s-full/context")
    assert cold.status_code == 200 and cold.json()["hot"] is False
    assert [m["content"] for m in cold.json()["messages"]] == ["hello"]
    warm = admin_role_client.post("/sessions/s-full/warm/")
    assert warm.status_code == 503
    assert "Redis is full" in warm.content.decode()
    assert "unreachable" not in warm.content.decode()
    make_room(own)
    assert "Redis is full" not in admin_role_client.get("/").content.decode()


def test_a_forget_while_redis_is_paused_answers_at_once_and_is_never_recalled(own, admin_api):
    gone, kept = _two_memories(admin_api)
    own.execute_command("CLIENT", "PAUSE", PAUSE_MS, "WRITE")
    started = time.monotonic()
    answer = admin_api.delete(f"/memories/{gone}")
    took = time.monotonic() - started
    assert answer.status_code == 204
    # The database is the truth: a write never waits out a paused Redis.
    assert took < PAUSE_MS / 1000 - 2, took
    assert answer.headers.get("X-Warning") == "index_pending"
    # A recall during the pause waits for it (or fails); once Redis answers again, the
    # forgotten memory is not among the results.
    found = _recall(admin_api, "kumquat")
    assert gone not in _ids(found) and kept in _ids(found)
    own.execute_command("CLIENT", "UNPAUSE")
    assert gone not in _ids(_recall(admin_api, "kumquat"))


def test_an_importance_patched_while_redis_is_paused_is_never_stale(own, admin_api):
    gone, kept = _two_memories(admin_api)
    own.execute_command("CLIENT", "PAUSE", PAUSE_MS, "WRITE")
    answer = admin_api.patch(f"/memories/{kept}", {"importance": 0.05})
    assert answer.status_code == 200 and answer.json().get("warning") == "index_pending"
    own.execute_command("CLIENT", "UNPAUSE")
    row = next(r for r in _recall(admin_api, "kumquat")["results"] if r["memory_id"] == kept)
    assert row["importance"] == 0.05 and row["version"] == 2


@pytest.mark.django_db(transaction=True)  # a real commit: threads read the rows
def test_concurrent_recalls_never_see_a_forgotten_memory_during_a_pause(own, admin_api, api):
    """Recalls running while the forget lands and while Redis is paused."""
    gone, kept = _two_memories(admin_api)
    seen: list[list[str]] = []
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            answer = api.post("/recall", {"user_id": "team-a", "query": "kumquat"})
            if answer.status_code == 200:
                seen.append(_ids(answer.json()))
            time.sleep(0.05)

    admin_api.delete(f"/memories/{kept}")  # forgotten with Redis healthy: never seen after
    own.execute_command("CLIENT", "PAUSE", 3000, "WRITE")
    thread = threading.Thread(target=poll)
    thread.start()
    try:
        admin_api.delete(f"/memories/{gone}")
        time.sleep(4)
    finally:
        stop.set()
        thread.join(timeout=30)
    after_forget = seen[1:]  # the first poll may have started before the forget committed
    assert all(gone not in ids for ids in after_forget), seen
    assert all(kept not in ids for ids in seen), seen
