"""The RQ worker class that times every job: ``memory_console_job_duration_seconds``.

Timed in the worker's own process around the whole execution (fork, run, bookkeeping), so
the figures land in one set of metric files per worker, not one per forked work horse.
A job whose result reports drift (the reconcile: ``stale``, ``orphans``, ``drift_after``)
also sets ``memory_console_index_drift``.

Use: ``RQ = {"WORKER_CLASS": "integrations.metrics.worker.MeteredWorker"}`` in settings
(django-rq's ``rqworker`` reads it).
"""

import time

from rq import Worker

from integrations.metrics.registry import INDEX_DRIFT, JOB_SECONDS, count_webhook_delivery


def job_label(job) -> str:
    """The job's function, without its module path (``reindex_job``)."""
    return (job.func_name or "unknown").rsplit(".", 1)[-1]


class MeteredWorker(Worker):
    def execute_job(self, job, queue):
        start = time.perf_counter()
        try:
            super().execute_job(job, queue)
        finally:
            status = job.get_status(refresh=True)
            status = getattr(status, "value", status) or "unknown"
            JOB_SECONDS.labels(job=job_label(job), status=status).observe(
                time.perf_counter() - start)
            if status == "finished":
                record_drift(job.return_value())
            record_webhook(job)


def record_drift(result) -> None:
    """Set the drift gauge from a reconcile's result ``{"stale", "orphans", "drift_after"}``."""
    if isinstance(result, dict) and {"stale", "orphans", "drift_after"} <= result.keys():
        INDEX_DRIFT.labels(when="found").set(result["stale"] + result["orphans"])
        INDEX_DRIFT.labels(when="after_repair").set(result["drift_after"])


def record_webhook(job) -> None:
    """Count a webhook delivery attempt from the outcome the delivery job left in its meta
    (``integrations/webhooks/deliver.py``: ``{"event", "outcome", "seconds"}``)."""
    if job_label(job) != "deliver_job":
        return
    attempt = job.get_meta(refresh=True).get("webhook")
    if isinstance(attempt, dict):
        count_webhook_delivery(event=attempt["event"], outcome=attempt["outcome"],
                               seconds=attempt.get("seconds"))
