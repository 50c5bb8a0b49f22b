"""The job queues by logical name, and enqueueing a background job (django-rq) after the
current transaction commits.

The code names a queue by its logical name, ``"default"`` or ``"index"``; settings
``JOB_QUEUES`` maps each to the RQ queue it is (the same name in production; a test run's
names carry its key prefix, so runs sharing a Redis never take each other's jobs). Every
reader and writer of a queue, its registries and the worker go through this mapping.

A layer below every writer and job module, so a writer can ask for a job by its dotted
path without importing the jobs (which import the writers).
"""

import logging
import uuid
from collections.abc import Callable
from functools import partial

import django_rq
from django.conf import settings
from django.db import transaction
from redis import RedisError
from rq import Callback, Retry

log = logging.getLogger(__name__)

DEFAULT = "default"
INDEX = "index"
LOGICAL = (DEFAULT, INDEX)


def queue_name(logical: str) -> str:
    """The RQ queue name of a logical queue (KeyError for an unknown one)."""
    return settings.JOB_QUEUES[logical]


def queue_names(*logical: str) -> list[str]:
    """The RQ queue names of ``logical`` (every queue when none is named): what a worker
    listens on."""
    return [queue_name(name) for name in logical or LOGICAL]


def logical_name(rq_name: str) -> str:
    """The logical name of an RQ queue name (a job's ``origin``); an unknown name as is."""
    return next((k for k, v in settings.JOB_QUEUES.items() if v == rq_name), rq_name)


def get_queue(logical: str = INDEX, **kwargs):
    """The RQ queue of a logical queue (``django_rq.get_queue`` arguments pass through)."""
    return django_rq.get_queue(queue_name(logical), **kwargs)


def get_connection():
    """The Redis connection of the job queues (both live on ``RQ_REDIS_URL``)."""
    return django_rq.get_connection(queue_name(INDEX))


def job_id(name: str) -> str:
    """A fixed job id (a periodic job's), the queues' prefix before it: job hashes are not
    per queue, so two runs sharing a Redis must not share them either."""
    return settings.MEMORY_QUEUE_PREFIX + name


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


def enqueue(func, *args, queue: str = INDEX, namespaces: list[str] | None = None,
            **kwargs) -> str:
    """Enqueue ``func`` on the logical queue ``queue`` after the current transaction
    commits; returns the job id.

    ``namespaces`` are the namespaces the job reads or changes (``job.meta["namespaces"]``;
    None: every one), so ``GET /jobs/{id}`` shows it only to tokens that reach them all.
    The id is chosen here because django-rq returns no job inside a transaction. Redis
    down: raises RedisError when no transaction is open, else logs it (:func:`after_commit`;
    a writer's job is asked for again: a session's fold by its next append).
    """
    job_id = f"job_{uuid.uuid4().hex[:16]}"
    # commit_mode="auto": after_commit decides when, and catches what fails after a commit.
    put = partial(get_queue(queue, commit_mode="auto").enqueue, func, *args,
                  job_id=job_id, meta={"namespaces": namespaces},
                  # A job whose worker died is retried once, then shows as failed: never
                  # silently lost.
                  retry=Retry(max=1), on_success=ON_SUCCESS, on_failure=ON_FAILURE, **kwargs)
    after_commit(put, what=f"job {func if isinstance(func, str) else func.__name__}")
    return job_id
