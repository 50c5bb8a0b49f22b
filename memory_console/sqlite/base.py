"""SQLite, with writers handed the write lock in turn instead of sleeping for it.

SQLite lets one transaction write at a time. A writer that finds the lock taken waits in
SQLite's busy handler, which *sleeps* between attempts (1, 2, 5, 10, 15, 20, 25, 25, 25, 50,
50, 100 ms, ...): the lock then sits free while the waiters sleep, so throughput falls as
writers are added (``POST /memories`` measured 25/s with 2 API clients and 18/s with 4 on
the same server, `bench/ingest.py`). Here every ``BEGIN IMMEDIATE`` first takes an
exclusive ``flock`` on ``<database file>.writelock`` (through ``filelock``, polling every
millisecond at most) and gives it back after its COMMIT or ROLLBACK, so the next writer
starts within a millisecond of the previous one's commit; processes and threads alike
queue on it. SQLite's own locking stays the guarantee: the file lock only decides who asks
next. A writer that cannot get the file lock within the database ``timeout`` goes on to
``BEGIN IMMEDIATE`` without it (SQLite's busy handler then applies, as before). In-memory
databases have no file and take no lock.

Used by ``memory_console/settings.py`` for every SQLite database (``ENGINE =
"memory_console.sqlite"``); ``connection.vendor`` stays ``"sqlite"``.
"""

import filelock
from django.db.backends.sqlite3 import base

POLL_SECONDS = 0.001


class DatabaseWrapper(base.DatabaseWrapper):
    _write_lock: filelock.FileLock | None = None
    _write_lock_held = False

    def _lock(self) -> filelock.FileLock | None:
        if self._write_lock is None and not self.is_in_memory_db():
            self._write_lock = filelock.FileLock(
                f"{self.settings_dict['NAME']}.writelock", thread_local=False,
                preserve_lock_file=True, poll_interval=POLL_SECONDS)
        return self._write_lock

    def _start_transaction_under_autocommit(self):
        lock = self._lock() if self.transaction_mode == "IMMEDIATE" else None
        if lock is not None and not self._write_lock_held:
            timeout = float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))
            try:
                lock.acquire(timeout=timeout)
                self._write_lock_held = True
            except filelock.Timeout:
                pass  # SQLite's busy handler decides, as without this lock
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._release_write_lock()
            raise

    def _release_write_lock(self) -> None:
        if self._write_lock_held:
            self._write_lock_held = False
            self._write_lock.release()

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._release_write_lock()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._release_write_lock()

    def _close(self):
        try:
            return super()._close()
        finally:
            self._release_write_lock()
