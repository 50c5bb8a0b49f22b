"""Jobs for tests that kill a worker mid-job: imported by the worker process (by dotted path),
never by the product."""

import time

from memories import store

HALTED = "halted"  # the hot-store key (under the namespace) set when the job halts


def reindex_halting_halfway(user_id: str) -> None:
    """The reindex job of ``user_id`` (its progress reported as ``operations.jobs`` does)
    that stops for good once half its batches are in: the state a worker killed mid-build
    leaves, reached every time (a worker killed at a progress seen by polling could
    finish first on a loaded machine)."""
    from operations import jobs, reindex

    def progress(done: int, total: int) -> None:
        jobs._progress(done, total)
        # Once: a retry of the killed job (RQ retries it once) runs to its end.
        if 2 * done >= total and store.get_client().set(store.key(user_id, HALTED), "1",
                                                        nx=True):
            time.sleep(3600)  # until the test kills the worker

    reindex.reindex_namespace(user_id, progress=progress)
