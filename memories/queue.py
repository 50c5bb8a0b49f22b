"""Enqueue a background job (django-rq) after the current transaction commits.

A layer below every writer and job module, so a writer can ask for a job by its dotted
path without importing the jobs (which import the writers).
"""

import logging
import uuid
from collections.abc import Callable
from functools import partial

import django_rq
from django.db import transaction
from redis import RedisError
from rq import Callback, Retry

log = logging.getLogger(__name__)

# job.finished webhook events (integrations/webhooks/job_events.py), by dotted path so this
# layer imports nothing above it.
ON_SUCCESS = Callback("integrations.webhooks.job_events.job_succeeded")
ON_FAILURE = Callback("integrations.webhooks.job_events.job_failed")


def after_commit(put: Callable[[], object], *, what: str) -> None:
    """Run ``put`` (a call that writes to Redis, e.g. an enqueue) once the current
    transaction commits, or at once when none is open.

    At once, a RedisError reaches the caller: nothing was done, so its action can answer
    503. After a commit it is logged, never raised: the write committed, and a 5xx would
    make a client apply it twice. Whoever asks for ``put`` names how what it skipped is
    done later (``what`` names it in the log).
    """
    if not transaction.get_connection().in_atomic_block:
        put()
        return

    def committed():
        try:
            put()
        except RedisError as exc:
            log.warning("%s not enqueued after the commit: %s", what, type(exc).__name__)

    transaction.on_commit(committed)


def enqueue(func, *args, queue: str = "index", namespaces: list[str] | None = None,
            **kwargs) -> str:
    """Enqueue ``func`` after the current transaction commits; returns the job id.

    ``namespaces`` are the namespaces the job reads or changes (``job.meta["namespaces"]``;
    None: every one), so ``GET /jobs/{id}`` shows it only to tokens that reach them all.
    The id is chosen here because django-rq returns no job inside a transaction. Redis
    down: raises RedisError when no transaction is open, else logs it (:func:`after_commit`;
    a writer's job is asked for again: a session's fold by its next append).
    """
    job_id = f"job_{uuid.uuid4().hex[:16]}"
    # commit_mode="auto": after_commit decides when, and catches what fails after a commit.
    put = partial(django_rq.get_queue(queue, commit_mode="auto").enqueue, func, *args,
                  job_id=job_id, meta={"namespaces": namespaces},
                  # A job whose worker died is retried once, then shows as failed: never
                  # silently lost.
                  retry=Retry(max=1), on_success=ON_SUCCESS, on_failure=ON_FAILURE, **kwargs)
    after_commit(put, what=f"job {func if isinstance(func, str) else func.__name__}")
    return job_id
