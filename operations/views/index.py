"""The Index page: health of the Redis index, drift, job history; reindex and reconcile."""

import datetime as dt
import logging

from django.conf import settings
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.pages import bad_request, render_page, role_required
from memories import store
from memories.models import Memory
from operations import health, jobs
from operations.forms import ReindexForm
from operations.views.jobs import enqueue_or_503, failed_job_rows, job_history_rows

log = logging.getLogger(__name__)



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

    Queries: the session and the user's roles, one existence check of the drifted ids and
    one page of job events; drift and the per-namespace counts come from
    ``operations.drift_cache`` (computed at most once per ``MEMORY_DRIFT_CACHE_SECONDS``).
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
        data["drift_at_time"] = dt.datetime.fromisoformat(data["drift_at"])
        context["drift_every"] = settings.MEMORY_DRIFT_CACHE_SECONDS
        # Live rows per namespace come with the cached drift (bounded cost, drift_at).
        context["namespaces"] = [
            {"user_id": user_id, **stats} for user_id, stats in sorted(data["stats"].items())
        ]
        context["drifted"] = _drifted(data["drifted"])
        try:
            context["failed"], context["failed_total"] = failed_job_rows()
        except store.RedisError:
            context["failed"], context["failed_total"] = [], 0
    context["history"] = job_history_rows()
    context["checked_at"] = timezone.now()
    return render_page(request, "operations/index.html", context, partial="health")


@require_POST
@role_required("admin")
def index_reindex(request):
    """Rebuild one namespace (``user_id``) or every namespace (blank) from the database."""
    form = ReindexForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form_errors(form))
    user_id = form.cleaned_data["user_id"] or None
    return enqueue_or_503(
        request,
        jobs.reindex_job,
        user_id,
        queue="index",
        action="reindex",
        target=user_id or "*",
        namespaces=[user_id] if user_id else None,
    )


@require_POST
@role_required("admin")
def index_reconcile(request):
    """Repair exactly the drifted memories."""
    return enqueue_or_503(
        request, jobs.reconcile_job, queue="index", action="reconcile", target="*"
    )


def form_errors(form) -> str:
    return " ".join(e for errors in form.errors.values() for e in errors)

