"""Overview page, and the Index and Activity pages (placeholders until those features land)."""

from django.db.models import Count, Q
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from memories.models import Memory, Session
from memories.views._common import render_page, role_required

RECENT_CHANGES = 12


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def overview(request):
    """Counts, the latest changes (history rows) and a quick recall form.

    Queries: one aggregate over memories, one session count, one page of history rows.
    """
    counts = Memory.objects.aggregate(
        live=Count("memory_id", filter=Q(deleted_at__isnull=True)),
        forgotten=Count("memory_id", filter=Q(deleted_at__isnull=False)),
        namespaces=Count("user_id", distinct=True),
    )
    counts["sessions"] = Session.objects.count()
    recent = Memory.history.order_by("-history_date", "-history_id")[:RECENT_CHANGES]
    return render_page(
        request,
        "memories/overview.html",
        {
            "counts": counts,
            "recent": recent,
        },
        partial="stats",
    )


@require_GET
@role_required("viewer")
def index_status(request):
    return render_page(
        request,
        "memories/placeholder.html",
        {
            "title": "Index",
            "lead": "Health of the Redis search index, kept in line with the database.",
            "will_hold": [
                "memories in the database vs. memories indexed, and the live drift between them",
                "namespaces and per-namespace index statistics (documents, average length)",
                "reindex of one namespace or all, with progress, and reconcile",
                "queue depth, failed jobs and the history of job runs",
            ],
            "api_hint": "GET /api/v1/index/health answers the same questions as JSON today.",
        },
    )


@require_GET
@role_required("viewer")
def activity(request):
    return render_page(
        request,
        "memories/placeholder.html",
        {
            "title": "Activity",
            "lead": "The audit feed: who did what, to which target, and why.",
            "will_hold": [
                "rollbacks, purges, token and job events, newest first",
                "filters by actor, action, target and date",
                "links from each event to the memory or job it concerns",
            ],
            "api_hint": "GET /api/v1/audit answers the same questions as JSON today.",
        },
    )
