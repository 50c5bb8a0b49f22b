"""The SQLite backend's write lock (memory_console/backends/sqlite3/base.py): one writer
transaction at a time across threads and processes, let go on commit, rollback and close,
never shared with a forked child, and "database is locked" after the timeout as SQLite
would say."""

import multiprocessing
import os
import threading

import pytest
from django.db import OperationalError, connection, transaction

from memories import services
from memories.models import Memory
from memory_console.backends.sqlite3.base import WriteLock

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write lock")

_INHERITED: WriteLock | None = None


def _child_tries(checked, go, result) -> None:
    lock = _INHERITED  # the parent's object, as a forked gunicorn worker inherits it
    result.put(("while the parent holds it", lock.acquire(timeout=0.3)))
    checked.set()
    go.wait(10)
    got = lock.acquire(timeout=10)
    result.put(("after the parent let go", got))
    if got:
        lock.release()


def test_a_forked_child_never_shares_its_parents_lock(tmp_path):
    """A child inherits the parent's lock object (and descriptor) while the parent holds it:
    it must find the lock taken (through the shared open file it would count as its own),
    and take it once the parent lets go."""
    global _INHERITED
    _INHERITED = lock = WriteLock(str(tmp_path / "db.writelock"))
    assert lock.acquire(timeout=1)
    ctx = multiprocessing.get_context("fork")
    checked, go, result = ctx.Event(), ctx.Event(), ctx.Queue()
    child = ctx.Process(target=_child_tries, args=(checked, go, result))
    child.start()
    assert result.get(timeout=10) == ("while the parent holds it", False)
    checked.wait(10)
    lock.release()
    go.set()
    assert result.get(timeout=15) == ("after the parent let go", True)
    child.join(10)
    assert child.exitcode == 0
    assert lock.acquire(timeout=5)  # the child let go: the parent takes it again
    lock.release()
    lock.close()


def test_connections_in_threads_hold_it_one_at_a_time(tmp_path):
    path = str(tmp_path / "db.writelock")
    inside, most, errors = [0], [0], []
    guard = threading.Lock()

    def run():
        lock = WriteLock(path)  # one per connection, as each thread has its own
        for _ in range(50):
            if not lock.acquire(timeout=10):
                errors.append("timeout")
                return
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            with guard:
                inside[0] -= 1
            lock.release()
        lock.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and most[0] == 1


@pytest.mark.django_db(transaction=True)
def test_a_transaction_holds_the_lock_until_commit_or_rollback(redis_client):
    with transaction.atomic():
        Memory.objects.count()
        assert connection._write_lock.held
    assert not connection._write_lock.held
    with pytest.raises(RuntimeError), transaction.atomic():
        services.memory_create(user_id="lock-ns", content="rolled back with the lock")
        assert connection._write_lock.held
        raise RuntimeError("fail the write")
    assert not connection._write_lock.held
    assert not Memory.objects.filter(user_id="lock-ns").exists()
    memory, _ = services.memory_create(user_id="lock-ns", content="written after it")
    assert not connection._write_lock.held
    assert Memory.objects.filter(memory_id=memory.memory_id).exists()


@pytest.mark.django_db(transaction=True)
def test_a_writer_that_cannot_get_the_lock_gets_database_is_locked(redis_client):
    other = WriteLock(os.path.abspath(str(connection.settings_dict["NAME"])) + ".writelock")
    options = connection.settings_dict["OPTIONS"]
    timeout = options.get("timeout")
    assert other.acquire(timeout=5)  # another connection's writer
    options["timeout"] = 0.2
    try:
        with pytest.raises(OperationalError, match="database is locked"):
            services.memory_create(user_id="lock-ns", content="never written")
    finally:
        options["timeout"] = timeout
        other.close()
    assert not connection._write_lock.held
    assert not Memory.objects.filter(user_id="lock-ns").exists()
    services.memory_create(user_id="lock-ns", content="written once the lock is free")
    assert Memory.objects.filter(user_id="lock-ns").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_process_checkpoints_after_its_commits_without_the_lock(redis_client, monkeypatch):
    """SQLite's own checkpoint would run inside COMMIT, with the lock held; the backend's
    runs after it is let go, so other writers go on during the fsyncs."""
    from memory_console.backends.sqlite3 import base

    seen = []
    real = base.DatabaseWrapper._checkpoint

    def spy(self):
        seen.append(self._write_lock.held)
        real(self)

    monkeypatch.setattr(base, "CHECKPOINT_EVERY", 2)
    monkeypatch.setattr(base.DatabaseWrapper, "_checkpoint", spy)
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_autocheckpoint")
        assert cursor.fetchone()[0] >= 10000  # SQLite's own is only a safety net
    for n in range(6):
        services.memory_create(user_id="lock-ns", content=f"checkpointed write {n}")
    assert seen and not any(seen)
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
        busy, frames, done = cursor.fetchone()
    assert busy == 0 and frames == done


def _token_seen_for_the_first_time(django_user_model) -> str:
    from accounts.tokens import token_create

    return token_create(user=django_user_model.objects.create_user("lock-agent"))


@pytest.mark.django_db(transaction=True)
def test_a_write_outside_a_transaction_takes_the_lock_too(redis_client, django_user_model):
    """A token's last-used stamp is one UPDATE in autocommit, in the middle of an API
    request. Outside the lock it met the other writers in SQLite's busy handler (sleeps up
    to 100 ms, a try succeeding only between two writers' turns), so under steady creates
    the request could wait up to the busy timeout."""
    from accounts.models import ApiToken
    from accounts.tokens import token_lookup

    token = _token_seen_for_the_first_time(django_user_model)
    held = []

    def seen(sql):  # called by SQLite as it runs each statement
        if sql.lstrip().upper().startswith("UPDATE") and ApiToken._meta.db_table in sql:
            held.append(connection._write_lock is not None and connection._write_lock.held)

    connection.ensure_connection()
    connection.connection.set_trace_callback(seen)
    try:
        assert token_lookup(token) is not None
    finally:
        connection.connection.set_trace_callback(None)
    assert held == [True]
    assert not connection._write_lock.held  # let go once the statement is done


@pytest.mark.django_db(transaction=True)
def test_a_write_outside_a_transaction_waits_for_the_lock(redis_client, django_user_model):
    """... and, like a transaction, gets "database is locked" once the timeout has passed
    while another writer holds it; reads outside a transaction never wait for it. The
    token's last-used stamp is such a write, but a request never fails for it: the token
    still authenticates (the stamp is tried again a minute later)."""
    from accounts.models import ApiToken
    from accounts.tokens import token_lookup

    token = _token_seen_for_the_first_time(django_user_model)
    other = WriteLock(os.path.abspath(str(connection.settings_dict["NAME"])) + ".writelock")
    options = connection.settings_dict["OPTIONS"]
    timeout = options.get("timeout")
    assert other.acquire(timeout=5)
    options["timeout"] = 0.2
    try:
        assert ApiToken.objects.count() == 1  # a read
        with pytest.raises(OperationalError, match="database is locked"):
            ApiToken.objects.update(name="renamed")
        assert token_lookup(token) is not None  # its stamp refused, the request goes on
    finally:
        options["timeout"] = timeout
        other.close()
    assert not connection._write_lock.held
    assert ApiToken.objects.get().last_used_at is None
