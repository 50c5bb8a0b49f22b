"""The Index page (health of the Redis index, jobs) and the forgetting-policy page.

Reads come from ``memories.health`` / ``memories.jobs`` / ``memories.policy``; the buttons
enqueue jobs (``jobs.enqueue``: after commit, on the ``index`` or ``default`` queue) and
record an audit event, as the API does. A started job answers htmx with its progress
fragment, which polls itself every second until the job is finished or failed; a plain
browser is sent to the job's own page (POST/redirect/GET), which reloads itself while the
job runs (``<noscript>`` refresh), so everything works without JavaScript.

Redis down never means a 500: the page says so (the health of an index that cannot be
reached is exactly that), and an action that needs Redis answers 503 with a clear message.
"""

import logging

import django_rq
from django.conf import settings
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import trigger_client_event
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry

from memories import health, jobs, policy, services, store
from memories.forms import NamespaceForm, ReindexForm
from memories.models import AuditEvent, Memory
from memories.roles import has_role
from memories.views._common import (
    bad_request,
    redis_unavailable,
    render_page,
    role_required,
    wants_fragment,
)

log = logging.getLogger(__name__)

JOB_ACTIONS = ("reindex", "reconcile", "cleanup", "consolidate", "import", "job_retry")
JOB_HISTORY = 20
NAMESPACE_HINTS = 200
FAILED_SHOWN = 10
PLAN_SHOWN = 200  # ids listed per plan section; the count above says how many in all
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
    # Both queues live on RQ_REDIS_URL (jobs.job_status reads through the "index" one too).
    return django_rq.get_connection("index")


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
    }


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
        return render_page(request, "memories/job.html", context, partial="progress", status=503)
    if job is None:
        if wants_fragment(request):
            return render_page(
                request,
                "memories/job.html",
                {"job_id": job_id, "missing": True},
                partial="progress",
                status=286,
            )
        raise Http404(f"job {job_id} not found")
    response = render_page(
        request, "memories/job.html", {"job": job, "job_id": job_id}, partial="progress"
    )
    if wants_fragment(request) and not job["running"]:
        # The Index page listens for this and refreshes its health numbers.
        trigger_client_event(response, "job-done", {"job_id": job_id, "status": job["status"]})
    return response


def _started(request, job_id: str):
    """The answer to a POST that enqueued a job: its progress fragment (htmx) or its page."""
    if not request.htmx:
        return redirect("memories:memories-job", job_id=job_id)
    try:
        job = job_progress(job_id)
    except store.RedisError:
        job = None
    if job is None:
        # Enqueued after commit; there is no transaction here, so it exists by now. Should
        # the result have expired already, the fragment says so instead of polling forever.
        return render_page(
            request, "memories/job.html", {"job_id": job_id, "missing": True}, partial="progress"
        )
    response = render_page(
        request, "memories/job.html", {"job": job, "job_id": job_id}, partial="progress"
    )
    # The Index page reloads its health fragment, whose job history now lists this job.
    return trigger_client_event(response, "job-started", {"job_id": job_id})


def _enqueue_or_503(request, func, *args, queue: str, action: str, target: str):
    """Enqueue ``func``, record who asked (as the API does), and answer with its progress.

    No transaction is open here, so ``jobs.enqueue`` reaches Redis at once: when Redis is
    down it raises, nothing is recorded and the answer is a 503 with a clear message. The
    audit row is written only for a job that was really enqueued.
    """
    try:
        job_id = jobs.enqueue(func, *args, queue=queue)
    except store.RedisError as exc:
        log.warning("job not enqueued: %s", type(exc).__name__)
        return redis_unavailable(request)
    services.audit_record(actor=request.user, action=action, target=target, data={"job_id": job_id})
    return _started(request, job_id)


# --- the Index page ---------------------------------------------------------------------------


def _failed_jobs() -> tuple[list[dict], int]:
    """The newest failed jobs of both queues (function, arguments, last error line, when)
    and how many there are in all.

    Read here rather than from ``index_health()["failed_jobs"]``, which lists the *oldest*
    20 per queue without their errors (a new failure would not show once 20 older ones
    stay in the registry; see the report for a patch).
    """
    connection = _connection()
    entries, total = [], 0
    for name in ("default", "index"):
        registry = FailedJobRegistry(queue=django_rq.get_queue(name))
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


def _job_history() -> list[dict]:
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


def _drifted(ids: list[str]) -> list[dict]:
    """Drifted ids, each marked whether the database still has the memory (an orphan in
    Redis of a purged memory has no page to link to)."""
    known = set(Memory.objects.filter(memory_id__in=ids).values_list("memory_id", flat=True))
    return [{"memory_id": i, "in_db": i in known} for i in ids]


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def index_status(request):
    """Health of the index (DB vs Redis, drift, namespaces, Redis memory, queues, failed
    jobs), the reindex/reconcile buttons and the job history. htmx gets ``#index-health``.

    The fragment reloads itself when a job is started or ends on this page (the
    ``job-started`` / ``job-done`` events), so the numbers and the job history stay current.

    Queries: the session and the user's roles, the drift's per-namespace reads, one
    aggregate of live memories per namespace, one existence check of the drifted ids, and
    one page of job events.
    """
    error, data = None, None
    try:
        data = health.index_health()
    except store.RedisError as exc:
        log.warning("index health unavailable: %s", type(exc).__name__)
        error = (
            "Redis is unreachable, so the index cannot be inspected and no job can run. "
            "Memories are safe in the database; reconcile once Redis is back."
        )
    context = {
        "health": data,
        "error": error,
        "can_admin": has_role(request.user, "admin"),
        "reindex_form": ReindexForm(),
    }
    if data is not None:
        # Live as drift counts it: not forgotten and not expired (an expired short-term
        # memory is out of the index by design, so it is not a mismatch).
        now = timezone.now()
        live_now = Q(deleted_at__isnull=True) & (Q(expire_at__isnull=True) | Q(expire_at__gt=now))
        live = dict(
            Memory.objects.values("user_id")
            .annotate(n=Count("memory_id", filter=live_now))
            .values_list("user_id", "n")
        )
        context["namespaces"] = [
            {"user_id": user_id, "in_db": live.get(user_id, 0), **stats}
            for user_id, stats in sorted(data["stats"].items())
        ]
        context["drifted"] = _drifted(data["drifted"])
        try:
            context["failed"], context["failed_total"] = _failed_jobs()
        except store.RedisError:
            context["failed"], context["failed_total"] = [], 0
    context["history"] = _job_history()
    context["checked_at"] = timezone.now()
    return render_page(request, "memories/index.html", context, partial="health")


@require_POST
@role_required("admin")
def index_reindex(request):
    """Rebuild one namespace (``user_id``) or every namespace (blank) from the database."""
    form = ReindexForm(request.POST)
    if not form.is_valid():
        return bad_request(request, _errors(form))
    user_id = form.cleaned_data["user_id"] or None
    return _enqueue_or_503(
        request,
        jobs.reindex_job,
        user_id,
        queue="index",
        action="reindex",
        target=user_id or "*",
    )


@require_POST
@role_required("admin")
def index_reconcile(request):
    """Repair exactly the drifted memories."""
    return _enqueue_or_503(
        request, jobs.reconcile_job, queue="index", action="reconcile", target="*"
    )


@require_POST
@role_required("admin")
def job_retry(request, job_id: str):
    """Put a failed job back on its queue (rq's FailedJobRegistry.requeue)."""
    if len(job_id) > 64:
        raise Http404("no such job")
    try:
        job = Job.fetch(job_id, connection=_connection())
        FailedJobRegistry(queue=django_rq.get_queue(job.origin)).requeue(job_id)
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


def _errors(form) -> str:
    return " ".join(e for errors in form.errors.values() for e in errors)


# --- the policy page --------------------------------------------------------------------------


def _previews(ids: set[str]) -> dict[str, Memory]:
    return {
        m.memory_id: m
        for m in Memory.objects.filter(memory_id__in=ids).only(
            "memory_id", "content", "importance", "accessed_at", "created_at", "access_count"
        )
    }


@require_GET
@vary_on_headers("HX-Request")
@role_required("admin")
def policy_page(request):
    """``/index/policy/?user_id=``: what the forgetting policy and consolidation would do
    to one namespace now (dry runs: nothing is written), with buttons that apply them as
    jobs. htmx gets ``#policy``."""
    submitted = "user_id" in request.GET
    form = NamespaceForm(request.GET if submitted else None)
    context = {"form": form}
    status = 200
    if submitted and form.is_valid():
        user_id = form.cleaned_data["user_id"]
        plan = policy.cleanup_plan(user_id=user_id)
        groups = policy.consolidation_plan(user_id=user_id)
        shown = {
            "forget": plan.forget[:PLAN_SHOWN],
            "consolidate": plan.consolidate[:PLAN_SHOWN],
            "archive": plan.archive[:PLAN_SHOWN],
        }
        grouped = groups[:PLAN_SHOWN]
        memories = _previews(
            {i for ids in shown.values() for i in ids} | {i for g in grouped for i in g}
        )
        context.update(
            user_id=user_id,
            plan=plan,
            sections=[
                (
                    "forget",
                    "Forget (idle, below the importance bound)",
                    len(plan.forget),
                    [memories[i] for i in shown["forget"] if i in memories],
                ),
                (
                    "archive",
                    "Archive (over the per-namespace cap)",
                    len(plan.archive),
                    [memories[i] for i in shown["archive"] if i in memories],
                ),
                (
                    "consolidate",
                    "Offered for consolidation (idle, important enough to keep)",
                    len(plan.consolidate),
                    [memories[i] for i in shown["consolidate"] if i in memories],
                ),
            ],
            groups=[[memories[i] for i in g if i in memories] for g in grouped],
            n_groups=len(groups),
            plan_shown=PLAN_SHOWN,
            rule={
                "idle_days": settings.MEMORY_POLICY_IDLE_DAYS,
                "importance_below": settings.MEMORY_POLICY_IMPORTANCE_BELOW,
                "max_long_term": settings.MEMORY_POLICY_MAX_LONG_TERM,
            },
        )
    elif submitted:
        status = 400
    context["namespaces"] = (
        Memory.objects.values_list("user_id", flat=True)
        .distinct()
        .order_by("user_id")[:NAMESPACE_HINTS]
    )
    return render_page(request, "memories/policy.html", context, partial="policy", status=status)


def _policy_apply(request, func, action: str):
    form = NamespaceForm(request.POST)
    if not form.is_valid():
        return bad_request(request, _errors(form))
    user_id = form.cleaned_data["user_id"]
    return _enqueue_or_503(request, func, user_id, queue="default", action=action, target=user_id)


@require_POST
@role_required("admin")
def policy_cleanup(request):
    """Apply the forgetting policy to one namespace (``jobs.cleanup_job``, queue default)."""
    return _policy_apply(request, jobs.cleanup_job, "cleanup")


@require_POST
@role_required("admin")
def policy_consolidate(request):
    """Merge the related groups of one namespace (``jobs.consolidate_job``, queue default)."""
    return _policy_apply(request, jobs.consolidate_job, "consolidate")
