"""Sessions: atomic ordered appends, TTL on every key, odd ids, transcript outlives TTL."""

import threading

import pytest
from django.db import connection

from memories import queue as job_queue
from memories import store
from sessions import services as sessions
from sessions import store as session_store
from sessions.models import Message, Session

# The PostgreSQL pass runs these (scripts/test -m postgres): session row locks and a migration's
# backfill.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def new_session(session_id="s-1", user_id="u-a", ttl=600):
    return sessions.session_create(user_id=user_id, session_id=session_id, ttl_seconds=ttl)


def all_keys_have_ttl(session):
    client = store.get_client()
    for key in session_store.keys(session):
        if client.exists(key):
            assert client.ttl(key) > 0, key


def test_b22_api_and_window_return_oldest_first(builtins, api):
    assert api.post("/sessions", {"user_id": "u-a", "session_id": "c-1"}).status_code == 201
    for text in ("m1", "m2", "m3"):
        assert api.post("/sessions/c-1/messages", {"role": "user", "content": text}).status_code == 201
    body = api.get("/sessions/c-1/context").json()
    assert [m["content"] for m in body["messages"]] == ["m1", "m2", "m3"]
    assert body["total"] == 3
    assert [m["content"] for m in api.get("/sessions/c-1/context?last=2").json()["messages"]] == [
        "m2", "m3"]


def test_it_keeps_the_newest_messages_when_trimming(builtins, monkeypatch):
    monkeypatch.setattr(session_store, "WINDOW_MAX", 3)
    s = new_session()
    sessions.session_append(session_id="s-1", messages=[
        {"role": "user", "content": f"m{n}"} for n in range(1, 6)])
    assert [m["content"] for m in session_store.window_read(s, 10)] == ["m3", "m4", "m5"]
    ctx = sessions.session_context(session_id="s-1", last=5)
    assert [m["content"] for m in ctx["messages"]] == ["m1", "m2", "m3", "m4", "m5"]


@pytest.mark.django_db(transaction=True)  # a real commit: threads read the rows
def test_b20_concurrent_appends_lose_and_reorder_nothing(builtins):
    s = new_session()
    errors = []

    def append(n):
        try:
            sessions.session_append(session_id="s-1", messages=[
                {"role": "user", "content": f"message {n}"}])
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=append, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    rows = list(Message.objects.filter(session=s).order_by("seq"))
    assert [r.seq for r in rows] == list(range(1, 51))
    window = session_store.window_read(s, 100)
    assert len(window) == 50
    assert [m["content"] for m in window] == [r.content for r in rows]
    all_keys_have_ttl(s)


def test_ttl_is_present_on_every_key_after_every_operation(builtins):
    s = new_session(ttl=100)
    all_keys_have_ttl(s)
    sessions.session_append(session_id="s-1", messages=[{"role": "user", "content": "hi"}])
    all_keys_have_ttl(s)
    session_store.window_read(s, 5)
    all_keys_have_ttl(s)
    ttls = {store.get_client().ttl(k) for k in session_store.keys(s)}
    assert all(100 - 5 <= t <= 110 for t in ttls)


def test_expiry_leaves_the_transcript_and_the_session_can_be_warmed(builtins):
    s = new_session()
    sessions.session_append(session_id="s-1", messages=[{"role": "user", "content": "hello"},
                                                         {"role": "assistant", "content": "hi"}])
    store.get_client().delete(*session_store.keys(s))  # what expiry does
    assert not session_store.is_hot(s)
    ctx = sessions.session_context(session_id="s-1")
    assert [m["content"] for m in ctx["messages"]] == ["hello", "hi"] and ctx["hot"] is False
    session_store.window_warm(s)
    assert session_store.is_hot(s)
    assert [m["content"] for m in session_store.window_read(s, 5)] == ["hello", "hi"]


def test_b23_odd_ids_never_collide(builtins, redis_client):
    ids = ["foo", "foobar", "foo:bar", "foo bar", "f*o", "客服:1"]
    made = {}
    for sid in ids:
        made[sid] = new_session(session_id=sid)
        sessions.session_append(session_id=sid, messages=[{"role": "user", "content": sid}] * 2)
    sessions.session_delete(session_id="foo")
    for sid in ids[1:]:
        assert redis_client.zcard(session_store.keys(made[sid])[1]) == 2, sid
    sessions.session_delete(session_id="f*o")
    for sid in ["foobar", "foo:bar", "foo bar", "客服:1"]:
        assert redis_client.zcard(session_store.keys(made[sid])[1]) == 2, sid
    assert store.key("ali:ce", "m", "x") != store.key("ali", "m", "ce:x")
    assert len({store.key(u, "sess", c, "msgs") for u, c in
                [("ali:ce", "x"), ("ali", "ce:x"), ("ali", "ce")]}) == 3


def test_time_travel_reads_what_was_known_at_a_moment(builtins, api):
    import datetime as dt

    api.post("/sessions", {"user_id": "u-a", "session_id": "tt"})
    base = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
    sessions.session_append(session_id="tt", messages=[
        {"role": "user", "content": f"m{n}", "at": base + dt.timedelta(minutes=n)}
        for n in range(5)])
    body = api.get("/sessions/tt/context?at=2026-05-01T12:02:30%2B00:00").json()
    assert [m["content"] for m in body["messages"]] == ["m0", "m1", "m2"]


def test_it_validates_session_requests(builtins, api, viewer_api):
    assert api.post("/sessions", {"user_id": " bad"}).json()["error"]["field"] == "user_id"
    api.post("/sessions", {"user_id": "u-a", "session_id": "v"})
    assert api.post("/sessions", {"user_id": "u-a", "session_id": "v"}).status_code == 400
    assert api.post("/sessions/v/messages", {"role": "robot", "content": "x"}).status_code == 400
    assert api.post("/sessions/nope/messages", {"role": "user", "content": "x"}).status_code == 404
    assert api.get("/sessions/v/context?last=0").status_code == 400
    assert viewer_api.post("/sessions/v/messages", {"role": "user", "content": "x"}).status_code == 403
    assert api.post("/sessions/v/messages", {"messages": [{"role": "user", "content": "a"},
                                                         {"role": "assistant", "content": "b"}]}
                    ).json() == {"length": 2}
    assert api.get("/sessions/v").json()["hot"] is True
    assert api.delete("/sessions/v").status_code == 204
    assert not Session.objects.filter(session_id="v").exists()


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_folding_keeps_every_message_in_the_summary_sources_or_the_window(builtins, settings):
    import django_rq

    settings.MEMORY_SESSION_FOLD_AT = 10
    job_queue.get_queue("default").empty()
    s = new_session()
    for n in range(1, 13):
        sessions.session_append(session_id="s-1", messages=[
            {"role": "user", "content": f"Fact {n}: the build server is named node{n}."}])
    assert job_queue.get_queue("default").count >= 1  # a fold was asked for
    django_rq.get_worker(*job_queue.queue_names("default")).work(burst=True)
    s.refresh_from_db()
    assert s.summary_upto_seq == 12 - 5 and s.summary
    window = [m["seq"] for m in session_store.window_read(s, 100)]
    assert window == list(range(s.summary_upto_seq + 1, 13))
    folded = set(range(1, s.summary_upto_seq + 1))
    assert folded | set(window) == set(range(1, 13)) and not folded & set(window)
    ctx = sessions.session_context(session_id="s-1", last=20)
    assert ctx["summary"] == s.summary and ctx["total"] == 12
    assert [m["content"] for m in ctx["messages"]][0].startswith("Fact 8:")
    all_keys_have_ttl(s)


def test_the_fold_summary_keeps_facts_within_its_bound_and_leaves_system_turns_out():
    from sessions.formation.rolling import fold_summary
    from sessions.formation.summary import Turn

    turns = [Turn("system", "You are a terse ops assistant."),
             Turn("user", "The deploy failed. Redis was full."),
             Turn("assistant", "Redis memory hit 95%. We added RAM."), Turn("user", "Thanks!")]
    out, method = fold_summary("", turns, max_chars=80)
    assert method == "local" and 0 < len(out) <= 80 and "Redis" in out
    assert "terse" not in out and "Thanks" not in out


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_token_budget_also_triggers_folding(builtins, settings):
    import django_rq

    settings.MEMORY_SESSION_FOLD_AT = 1000
    settings.MEMORY_SESSION_FOLD_TOKENS = 100  # 400 characters
    job_queue.get_queue("default").empty()
    s = new_session()
    for n in range(1, 7):
        sessions.session_append(session_id="s-1", messages=[
            {"role": "user", "content": f"Long note {n}. " + "word " * 20}])
    django_rq.get_worker(*job_queue.queue_names("default")).work(burst=True)
    s.refresh_from_db()
    assert 0 < s.summary_upto_seq < 6
    kept = [m["seq"] for m in session_store.window_read(s, 100)]
    assert kept == list(range(s.summary_upto_seq + 1, 7))
    assert sum(len(m["content"]) for m in session_store.window_read(s, 100)) // 4 <= 100


def unfolded_chars_counted(session) -> int:
    return sum(len(c) for c in Message.objects.filter(
        session=session, seq__gt=session.summary_upto_seq).values_list("content", flat=True))


def test_the_session_counters_follow_appends_and_folds(builtins, empty_queues):
    s = new_session()
    for n in range(1, 8):
        sessions.session_append(session_id="s-1", messages=[
            {"role": "user", "content": f"note {n} " + "é" * n},
            {"role": "assistant", "content": "ok"}])
    s.refresh_from_db()
    assert s.last_seq == 14 and s.unfolded_chars == unfolded_chars_counted(s)
    sessions.session_fold(session_id="s-1", keep=3)
    s.refresh_from_db()
    assert s.summary_upto_seq == 11 and s.unfolded_chars == unfolded_chars_counted(s) > 0
    assert sessions.session_append(session_id="s-1", messages=[
        {"role": "user", "content": "after the fold"}]) == 15
    s.refresh_from_db()
    assert s.unfolded_chars == unfolded_chars_counted(s)


def test_the_migration_fills_the_counters_of_existing_sessions(builtins, empty_queues):
    from importlib import import_module

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    # The migration runs with the models as they were at 0011 (Session was in memories).
    apps = MigrationExecutor(connection).loader.project_state(
        ("memories", "0011_session_counters")).apps
    s = new_session()
    sessions.session_append(session_id="s-1", messages=[
        {"role": "user", "content": f"message {n}"} for n in range(5)])
    sessions.session_fold(session_id="s-1", keep=2)
    Session.objects.filter(pk="s-1").update(last_seq=0, unfolded_chars=0)  # as before 0011
    import_module("memories.migrations.0011_session_counters").fill_counters(apps, None)
    s.refresh_from_db()
    assert s.last_seq == 5 and s.unfolded_chars == unfolded_chars_counted(s) == 18


def ten_messages(session_id="s-1"):
    new_session(session_id)
    sessions.session_append(session_id=session_id, messages=[
        {"role": "user", "content": f"message {n}"} for n in range(1, 11)])
    return Session.objects.get(pk=session_id)


def test_a_fold_whose_trim_failed_is_not_served_from_the_window(builtins, monkeypatch,
                                                                empty_queues):
    ten_messages()

    def trim_fails(*args, **kwargs):
        raise store.RedisError("down at the moment of the trim")

    monkeypatch.setattr(session_store, "window_trim", trim_fails)
    sessions.session_fold(session_id="s-1", keep=3)
    monkeypatch.undo()
    for _ in range(2):  # the first read also repairs the window for the second
        ctx = sessions.session_context(session_id="s-1", last=20)
        assert [m["content"] for m in ctx["messages"]] == ["message 8", "message 9",
                                                           "message 10"]


def test_a_refill_from_a_stale_read_does_not_bring_folded_messages_back(builtins, monkeypatch,
                                                                       empty_queues):
    s = ten_messages()
    store.get_client().zremrangebyscore(session_store.keys(s)[1], 10, 10)  # a gap
    real_warm = session_store.window_warm

    def fold_then_warm(session):
        sessions.session_fold(session_id="s-1", keep=3)  # commits after the context's read
        return real_warm(session)

    monkeypatch.setattr(session_store, "window_warm", fold_then_warm)
    sessions.session_context(session_id="s-1", last=5)
    monkeypatch.undo()
    ctx = sessions.session_context(session_id="s-1", last=20)
    assert [m["content"] for m in ctx["messages"]] == ["message 8", "message 9", "message 10"]
    assert ctx["hot"] is True
