"""``job.finished`` events: rq success/failure callbacks of the jobs enqueued through
``memories.queue.enqueue`` (attached there by dotted path), run by the worker when a job
ends. A failure that rq will retry is not the end: only the last failure is reported.
"""

from __future__ import annotations

import json

from django.db import transaction

from integrations.webhooks.outbox import outbox_record

# Jobs whose first argument is the namespace (user_id) they work on.
NAMESPACED = {"reindex_job", "cleanup_job", "consolidate_job"}


def _namespace(job) -> str | None:
    name = job.func_name.rsplit(".", 1)[-1]
    if name in NAMESPACED and job.args and isinstance(job.args[0], str):
        return job.args[0]
    return None


def _jsonable(value):
    return json.loads(json.dumps(value, default=str))


def _finished(job, *, status: str, result=None, error: str | None = None) -> None:
    data = {"job": {"job_id": job.id, "func": job.func_name.rsplit(".", 1)[-1],
                    "status": status, "result": _jsonable(result), "error": error}}
    with transaction.atomic():
        outbox_record(type="job.finished", namespace=_namespace(job), data=data)


def job_succeeded(job, connection, result, *args, **kwargs) -> None:
    _finished(job, status="finished", result=result)


def job_failed(job, connection, exc_type, exc_value, traceback) -> None:
    if job.retries_left:  # rq runs it again: not finished yet
        return
    _finished(job, status="failed", error=f"{exc_type.__name__}: {exc_value}"[:500])
