"""Enqueue a background job (django-rq) after the current transaction commits.

A layer below every writer and job module, so a writer can ask for a job by its dotted
path without importing the jobs (which import the writers).
"""

import uuid

import django_rq
from rq import Callback, Retry

# job.finished webhook events (integrations/webhooks/job_events.py), by dotted path so this
# layer imports nothing above it.
ON_SUCCESS = Callback("integrations.webhooks.job_events.job_succeeded")
ON_FAILURE = Callback("integrations.webhooks.job_events.job_failed")


def enqueue(func, *args, queue: str = "index", namespaces: list[str] | None = None,
            **kwargs) -> str:
    """Enqueue ``func`` after the current transaction commits; returns the job id.

    ``namespaces`` are the namespaces the job reads or changes (``job.meta["namespaces"]``;
    None: every one), so ``GET /jobs/{id}`` shows it only to tokens that reach them all.
    The id is chosen here because django-rq returns no job inside a transaction.
    """
    job_id = f"job_{uuid.uuid4().hex[:16]}"
    # A job whose worker died is retried once, then shows as failed: never silently lost.
    django_rq.get_queue(queue).enqueue(func, *args, job_id=job_id, retry=Retry(max=1),
                                       meta={"namespaces": namespaces}, on_success=ON_SUCCESS,
                                       on_failure=ON_FAILURE, **kwargs)
    return job_id

