"""Django's SQLite backend with a write lock that passes from writer to writer quickly.

SQLite has one writer at a time. A ``BEGIN IMMEDIATE`` that finds the write lock taken waits
in SQLite's busy handler, which sleeps 1, 2, 5, 10, 15, 20, 25 ... 100 ms between tries:
after a few tries a waiter sleeps tens of milliseconds while the lock is free again, so
concurrent writers (gunicorn's threads and processes) spent more time asleep than writing
(``bench/ingest.py``: long create tails with 4 and 8 clients). Here every
``IMMEDIATE`` (or ``EXCLUSIVE``) transaction first takes an ``flock`` of
``<database>.writelock`` through a descriptor of its own connection, tried again every 0.05
to 1 ms (:data:`POLL_FIRST`, :data:`POLL_MAX`), so a waiter starts at most a millisecond after
the lock is let go. Every waiter (any thread of any process) tries alike: none is queued
behind the others of its process, so no process can keep the lock from another. The lock
is let go when the transaction commits, rolls back or its connection closes, before the
``on_commit`` hooks run (the Redis mirror never holds it). A waiter that does not get it
within the connection's ``timeout`` (seconds; 5 when unset, as Django's) raises
``OperationalError("database is locked")``, as SQLite would.

Fork-safe: a descriptor belongs to the process that opened it; a forked child (a gunicorn
worker, a job) that inherited a connection opens its own and never unlocks or reuses the
parent's (flock locks belong to the open file, which parent and child would share).

Checkpoints: SQLite copies the write-ahead log into the database file (fsyncs included)
inside the ``COMMIT`` that crossed
``wal_autocheckpoint``, which would hold this lock for all of it. So the settings raise
``wal_autocheckpoint`` to a safety net (10,000 pages) and every :data:`CHECKPOINT_EVERY`-th
commit of a process runs ``PRAGMA wal_checkpoint(PASSIVE)`` itself, once the lock is let go:
the other writers go on meanwhile (a passive checkpoint never blocks them), and a failed
checkpoint is logged, never raised (the write has committed).

A write outside a transaction (an autocommit ``UPDATE``: a token's last-used stamp in an API
request, a mirror's resync flag) takes the lock for its one statement too: without it, it
met the writers in SQLite's busy handler, whose sleeps grow to 100 ms and whose tries find
the lock free only in the gaps between two writers' turns, so under steady writes a one-row
update could wait up to the busy timeout. Reads never take it. In-memory databases have no
file and no lock.
"""

import contextlib
import fcntl
import itertools
import logging
import os
import re
import time
import weakref

from django.db.backends.sqlite3 import base

log = logging.getLogger(__name__)

POLL_FIRST, POLL_MAX = 0.00005, 0.001  # seconds between two tries of a waiting writer
# A passive checkpoint after every this many commits of a process (about the pages SQLite's
# default autocheckpoint of 1,000 pages lets pass: a create writes ~10).
CHECKPOINT_EVERY = 100
_commits = itertools.count(1)
# A statement that writes (SQLite's own words; a WITH may end in any of them).
_WRITES = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE|WITH)\b", re.IGNORECASE)


class WriteLock:
    """An exclusive ``flock`` of ``path`` through a descriptor of this object's own."""

    def __init__(self, path: str):
        self.path = path
        self._fd: int | None = None
        self._pid = os.getpid()
        self.held = False
        _every.add(self)

    def after_fork(self) -> None:
        """In a forked child: forget the parent's descriptor and lock. Closing the inherited
        descriptor releases nothing (the parent holds the file open), and a parent that dies
        holding the lock then leaves no descriptor behind that keeps it held."""
        if self._pid != os.getpid():
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
            self._fd, self._pid, self.held = None, os.getpid(), False

    def _file(self) -> int:
        self.after_fork()
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return self._fd

    def acquire(self, timeout: float) -> bool:
        """Take the lock within ``timeout`` seconds; False when it could not."""
        fd, delay = self._file(), POLL_FIRST
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.held = True
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(delay)
                delay = min(delay * 2, POLL_MAX)

    def release(self) -> None:
        """Let go (nothing when this process does not hold it). Never raises: it runs after
        a commit, where an error would turn a committed write into a 500; a descriptor that
        cannot unlock is closed instead, which lets go of the lock all the same."""
        if self.held and self._pid == os.getpid():
            self.held = False
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            except OSError as exc:
                log.warning("sqlite write lock: unlock failed (%s), closing it", exc)
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None

    def close(self) -> None:
        self.release()
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd = None


_every: "weakref.WeakSet[WriteLock]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_every):
        lock.after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class LockingCursor(base.SQLiteCursorWrapper):
    """Django's cursor; a write outside a transaction holds the write lock while it runs."""

    db: "DatabaseWrapper"

    def execute(self, query, params=None):
        with self.db.autocommit_write(query):
            return super().execute(query, params)

    def executemany(self, query, param_list):
        with self.db.autocommit_write(query):
            return super().executemany(query, param_list)


class DatabaseWrapper(base.DatabaseWrapper):
    _write_lock: WriteLock | None = None

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=LockingCursor)
        cursor.db = self
        return cursor

    @contextlib.contextmanager
    def autocommit_write(self, query: str):
        """Hold the write lock around ``query`` when it writes outside a transaction (in a
        transaction it is held already; reads never take it)."""
        lock = None
        if not self.connection.in_transaction and _WRITES.match(query):
            lock = self._lock()
            if lock is not None and lock.held:
                lock = None
            elif lock is not None and not lock.acquire(self._lock_timeout()):
                with self.wrap_database_errors:
                    raise self.Database.OperationalError("database is locked")
        try:
            yield
        finally:
            if lock is not None:
                lock.release()

    def _lock_timeout(self) -> float:
        return float(self.settings_dict["OPTIONS"].get("timeout", 5))

    def _lock(self) -> WriteLock | None:
        if self.transaction_mode not in ("IMMEDIATE", "EXCLUSIVE") or self.is_in_memory_db():
            return None
        path = os.path.abspath(str(self.settings_dict["NAME"])) + ".writelock"
        if self._write_lock is None or self._write_lock.path != path:
            if self._write_lock is not None:
                self._write_lock.close()
            self._write_lock = WriteLock(path)
        return self._write_lock

    def _start_transaction_under_autocommit(self):
        lock = self._lock()
        if lock is not None and not lock.acquire(self._lock_timeout()):
            with self.wrap_database_errors:
                raise self.Database.OperationalError("database is locked")
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._let_go()
            raise

    def _let_go(self) -> None:
        if self._write_lock is not None:
            self._write_lock.release()

    def _commit(self):
        try:
            done = super()._commit()
        finally:
            held = self._write_lock is not None and self._write_lock.held
            self._let_go()
        if held and next(_commits) % CHECKPOINT_EVERY == 0:
            self._checkpoint()
        return done

    def _checkpoint(self) -> None:
        try:
            self.connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except self.Database.Error as exc:
            log.warning("sqlite checkpoint failed: %s", exc)

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._let_go()

    def _close(self):
        try:
            return super()._close()
        finally:
            if self._write_lock is not None:
                self._write_lock.close()
                self._write_lock = None
