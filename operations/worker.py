"""The RQ worker the product runs (``RQ["WORKER_CLASS"]``): RQ's own, plus one duty.

The periodic jobs (reconcile, access-count fold) keep themselves going: each run schedules
the next. When Redis loses its data (a restart without persistence, a flush), the scheduled
run is gone and nothing would schedule one again. So a worker that runs the scheduler
(``--with-scheduler``, as shipped) checks at start and with RQ's maintenance tasks, every
``MEMORY_WORKER_MAINTENANCE_SECONDS``, that each periodic job is pending, and schedules the
missing ones. Burst workers (tests, one-off runs) leave the schedule alone.
"""

import logging

from django.conf import settings
from rq import Worker

log = logging.getLogger(__name__)


class PeriodicSeedingWorker(Worker):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("maintenance_interval", settings.MEMORY_WORKER_MAINTENANCE_SECONDS)
        super().__init__(*args, **kwargs)

    def run_maintenance_tasks(self):
        super().run_maintenance_tasks()
        if self.scheduler is None:  # not --with-scheduler: the schedule is not ours to keep
            return
        from operations import jobs

        try:
            seeded = jobs.periodic_ensure()
        except Exception:  # noqa: BLE001 - a failed check must not stop the worker
            log.exception("could not check the periodic jobs")
            return
        if seeded:
            log.warning("scheduled missing periodic jobs again: %s", ", ".join(seeded))
