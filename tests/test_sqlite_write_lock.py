"""The SQLite backend queues writers on a file lock (memory_console/sqlite/base.py): a
second writer waits for the first one's COMMIT or ROLLBACK, and never keeps the lock after."""

import threading
import time

import pytest
from django.db import connection, transaction

from memories import services
from memories.models import Memory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _sqlite_only():
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        pytest.skip("the write lock is the SQLite file backend's")


def test_it_takes_the_lock_for_a_write_transaction_and_gives_it_back():
    with transaction.atomic():
        Memory.objects.count()
        assert connection._write_lock_held
        assert connection._write_lock.is_locked
    assert not connection._write_lock_held
    assert not connection._write_lock.is_locked


def test_it_gives_the_lock_back_after_a_rollback():
    with pytest.raises(RuntimeError), transaction.atomic():
        services.memory_create(user_id="u-lock", content="rolled back")
        raise RuntimeError
    assert not connection._write_lock_held
    assert not Memory.objects.filter(user_id="u-lock").exists()


def test_a_second_writer_waits_for_the_first_ones_commit():
    """Thread B's transaction starts only once thread A's committed: B sees A's row."""
    entered, order = threading.Event(), []

    def first():
        with transaction.atomic():
            services.memory_create(user_id="u-lock", content="first writer")
            entered.set()
            time.sleep(0.3)
            order.append("a-commit")
        connection.close()

    def second():
        entered.wait(5)
        with transaction.atomic():
            order.append("b-begin")
            order.append(Memory.objects.filter(user_id="u-lock").count())
        connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == ["a-commit", "b-begin", 1]
