"""A worker that waits out a Redis outage instead of quitting.

RQ's work loop retries a lost connection only while it waits for a job; anywhere else (the
work horse's outcome, the heartbeat after a job, the suspension check, the maintenance
tasks) a ``ConnectionError`` or ``TimeoutError`` ends it with "unhandled exception,
quitting", and reconcile, reindex, webhook delivery and access folds stop until someone
restarts the worker. Here each of those steps waits until Redis answers again (pauses
doubling from 1 to ``MAX_PAUSE_SECONDS``) and the loop goes on.

A job whose outcome could not be recorded stays in RQ's started registry; RQ's maintenance
fails it once its timeout has passed, and the periodic jobs are scheduled again by
``operations.worker.PeriodicSeedingWorker``. A SIGTERM during the wait stops the worker as
usual (RQ's handler raises out of the sleep).
"""

import logging
import time

import redis
from rq import Worker

log = logging.getLogger(__name__)

OUTAGE = (redis.ConnectionError, redis.TimeoutError)
MAX_PAUSE_SECONDS = 30.0


class OutageSurvivingWorker(Worker):
    def wait_for_redis(self, exc: Exception) -> None:
        """Block until the worker's Redis answers a PING again."""
        log.error("Redis is unreachable (%s: %s): the worker waits for it", type(exc).__name__,
                  exc)
        pause = 1.0
        while True:
            time.sleep(pause)
            try:
                self.connection.ping()
            except OUTAGE:
                pause = min(pause * 2, MAX_PAUSE_SECONDS)
                continue
            log.warning("Redis answers again: the worker goes on")
            return

    def execute_job(self, job, queue):
        try:
            return super().execute_job(job, queue)
        except OUTAGE as exc:
            self.wait_for_redis(exc)

    def heartbeat(self, *args, **kwargs):
        try:
            return super().heartbeat(*args, **kwargs)
        except OUTAGE as exc:
            self.wait_for_redis(exc)

    def check_for_suspension(self, burst: bool):
        try:
            return super().check_for_suspension(burst)
        except OUTAGE as exc:
            self.wait_for_redis(exc)

    def run_maintenance_tasks(self):
        try:
            return super().run_maintenance_tasks()
        except OUTAGE as exc:
            self.wait_for_redis(exc)

    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        # RQ retries a refused connection here but quits on a timeout.
        while True:
            try:
                return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
            except OUTAGE as exc:
                self.wait_for_redis(exc)
