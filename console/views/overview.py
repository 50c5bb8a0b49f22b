"""The overview page."""

from django.db.models import Count, Q
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from console.pages import render_page, role_required
from memories.models import Memory
from sessions.models import Session

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
        "console/overview.html",
        {
            "counts": counts,
            "recent": recent,
        },
        partial="stats",
    )
