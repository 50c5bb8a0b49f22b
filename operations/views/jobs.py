"""Job pages: progress, retry, the job history and failed jobs of the Index page."""

import logging
from urllib.parse import urlencode

from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import trigger_client_event
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry

from console.pages import bad_request, redis_unavailable, render_page, role_required, wants_fragment
from memories import queue as job_queue
from memories import services, store
from memories.models import AuditEvent
from operations import jobs

log = logging.getLogger(__name__)

JOB_ACTIONS = ("reindex", "reconcile", "cleanup", "consolidate", "import", "job_retry")

JOB_HISTORY = 20

FAILED_SHOWN = 10

RUNNING = ("queued", "started")

# What each job function is called on the page.
JOB_LABELS = {
    "reindex_job": "Reindex",
    "reconcile_job": "Reconcile",
    "periodic_reconcile_job": "Reconcile (periodic)",
    "cleanup_job": "Forgetting policy",
    "consolidate_job": "Consolidation",
    "session_fold_job": "Session summary",
}


def _connection():
    # Both queues live on RQ_REDIS_URL (jobs.job_status reads through the same one).
    return job_queue.get_connection()


# --- job progress -----------------------------------------------------------------------------


def job_progress(job_id: str) -> dict | None:
    """``jobs.job_status`` plus ``done``/``total`` from the job's meta, for the bar.

    None when the job is unknown (never existed, or its result expired). Raises RedisError.
    """
    status = jobs.job_status(job_id)
    if status is None:
        return None
    try:
        # job_status does not return the counters; one more small read (see the report for
        # a patch that would return them).
        job = Job.fetch(job_id, connection=_connection())
        meta, args = job.meta, job.args
    except NoSuchJobError:
        meta, args = {}, ()
    done, total = meta.get("done"), meta.get("total")
    if status["status"] == "finished" and total is not None:
        done = total
    percent = round(100 * (status["progress"] or 0))
    return {
        **status,
        "label": JOB_LABELS.get(status["func"], status["func"]),
        "done": done,
        "total": total,
        "percent": max(0, min(100, percent)),
        "running": status["status"] in RUNNING,
        # reindex_job of every namespace reports done/total of the namespace it is on.
        "per_namespace": status["func"] == "reindex_job" and not any(args),
        "result_items": _result_items(status["result"]),
        "undo_url": _undo_url(status, args),
    }


def _undo_url(status: dict, args) -> str:
    """Where a finished policy run or consolidation is undone: the Policy page's runs."""
    if status["status"] != "finished" or status["func"] not in ("cleanup_job",
                                                                 "consolidate_job") or not args:
        return ""
    return reverse("operations:policy") + "?" + urlencode({"user_id": args[0]}) + "#runs"


def _result_items(result) -> list[tuple[str, str]]:
    """A job's result dict as short ``(key, value)`` pairs (lists shown by their length)."""
    if not isinstance(result, dict):
        return []
    out = []
    for key, value in result.items():
        if isinstance(value, list | tuple):
            value = f"{len(value)}"
        elif isinstance(value, dict):
            value = ", ".join(
                f"{k} {len(v) if isinstance(v, list) else v}" for k, v in value.items()
            )
        out.append((key.replace("_", " "), str(value)))
    return out


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def job_detail(request, job_id: str):
    """One job: its page, or (htmx) the progress fragment that the page polls.

    The fragment carries ``hx-trigger="every 1s"`` only while the job is queued or started,
    so polling stops by itself once it is finished or failed. An unknown job is a 404 page;
    to htmx it answers 286, htmx's "stop polling" status, with a short explanation.
    """
    if len(job_id) > 64:
        raise Http404("no such job")
    try:
        job = job_progress(job_id)
    except store.RedisError:
        # Keep polling (slower) until Redis is back; the page says why nothing moves.
        context = {"job_id": job_id, "redis_error": True}
        return render_page(request, "operations/job.html", context, partial="progress", status=503)
    if job is None:
        if wants_fragment(request):
            return render_page(
                request,
                "operations/job.html",
                {"job_id": job_id, "missing": True},
                partial="progress",
                status=286,
            )
        raise Http404(f"job {job_id} not found")
    response = render_page(
        request, "operations/job.html", {"job": job, "job_id": job_id}, partial="progress"
    )
    if wants_fragment(request) and not job["running"]:
        # The Index page listens for this and refreshes its health numbers.
        trigger_client_event(response, "job-done", {"job_id": job_id, "status": job["status"]})
    return response


def _started(request, job_id: str):
    """The answer to a POST that enqueued a job: its progress fragment (htmx) or its page."""
    if not request.htmx:
        return redirect("operations:job", job_id=job_id)
    try:
        job = job_progress(job_id)
    except store.RedisError:
        job = None
    if job is None:
        # Enqueued after commit; there is no transaction here, so it exists by now. Should
        # the result have expired already, the fragment says so instead of polling forever.
        return render_page(
            request, "operations/job.html", {"job_id": job_id, "missing": True}, partial="progress"
        )
    response = render_page(
        request, "operations/job.html", {"job": job, "job_id": job_id}, partial="progress"
    )
    # The Index page reloads its health fragment, whose job history now lists this job.
    return trigger_client_event(response, "job-started", {"job_id": job_id})


def enqueue_or_503(request, func, *args, queue: str, action: str, target: str,
                   namespaces: list[str] | None = None):
    """Enqueue ``func``, record who asked (as the API does), and answer with its progress.

    No transaction is open here, so ``jobs.enqueue`` reaches Redis at once: when Redis is
    down it raises, nothing is recorded and the answer is a 503 with a clear message. The
    audit row is written only for a job that was really enqueued.
    """
    try:
        job_id = job_queue.enqueue(func, *args, queue=queue, namespaces=namespaces)
    except store.RedisError as exc:
        log.warning("job not enqueued: %s", type(exc).__name__)
        return redis_unavailable(request)
    services.audit_record(actor=request.user, action=action, target=target, data={"job_id": job_id})
    return _started(request, job_id)


# --- the Index page ---------------------------------------------------------------------------


def failed_job_rows() -> tuple[list[dict], int]:
    """The newest failed jobs of both queues (function, arguments, last error line, when)
    and how many there are in all.

    Read here rather than from ``index_health()["failed_jobs"]``, which lists the *oldest*
    20 per queue without their errors (a new failure would not show once 20 older ones
    stay in the registry; see the report for a patch).
    """
    connection = _connection()
    entries, total = [], 0
    for name in job_queue.LOGICAL:
        registry = FailedJobRegistry(queue=job_queue.get_queue(name))
        total += registry.count
        entries += [(name, i) for i in registry.get_job_ids(0, FAILED_SHOWN - 1, desc=True)]
    found = Job.fetch_many([job_id for _, job_id in entries], connection=connection)
    out = []
    for (queue, job_id), job in zip(entries, found, strict=True):
        if job is None:
            continue
        result = job.latest_result()
        error = (result.exc_string if result else None) or "failed"
        out.append(
            {
                "job_id": job_id,
                "queue": queue,
                "label": JOB_LABELS.get(job.func_name.rsplit(".", 1)[-1], job.func_name),
                "args": ", ".join(str(a) for a in job.args) or "all",
                "error": error.strip().splitlines()[-1],
                "traceback": error.strip(),
                "ended_at": job.ended_at,
            }
        )
    out.sort(key=lambda f: f["ended_at"] or timezone.now(), reverse=True)
    return out[:FAILED_SHOWN], total


def job_history_rows() -> list[dict]:
    """The latest job events (who asked for what, when) with the job's state when Redis
    still holds it; one pipelined fetch for all of them."""
    events = list(AuditEvent.objects.filter(action__in=JOB_ACTIONS)[:JOB_HISTORY])
    ids = [e.data.get("job_id") for e in events if isinstance(e.data, dict)]
    wanted = [i for i in ids if isinstance(i, str)]
    states = {}
    if wanted:
        try:
            for job in Job.fetch_many(wanted, connection=_connection()):
                if job is not None:
                    status = job.get_status(refresh=False)
                    states[job.id] = getattr(status, "value", status)
        except store.RedisError:
            pass
    rows = []
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        job_id = data.get("job_id") if isinstance(data.get("job_id"), str) else None
        details = {
            k: v for k, v in data.items() if k != "job_id" and not isinstance(v, dict | list)
        }
        rows.append(
            {
                "event": event,
                "job_id": job_id,
                "status": states.get(job_id) if job_id else None,
                "details": details,
            }
        )
    return rows


@require_POST
@role_required("admin")
def job_retry(request, job_id: str):
    """Put a failed job back on its queue (rq's FailedJobRegistry.requeue)."""
    if len(job_id) > 64:
        raise Http404("no such job")
    try:
        job = Job.fetch(job_id, connection=_connection())
        FailedJobRegistry(
            queue=job_queue.get_queue(job_queue.logical_name(job.origin))).requeue(job_id)
    except NoSuchJobError:
        raise Http404(f"job {job_id} not found") from None
    except InvalidJobOperation:
        return bad_request(request, f"Job {job_id} has not failed: there is nothing to retry.")
    except store.RedisError:
        return redis_unavailable(request)
    services.audit_record(
        actor=request.user, action="job_retry", target=job_id, data={"job_id": job_id}
    )
    return _started(request, job_id)

