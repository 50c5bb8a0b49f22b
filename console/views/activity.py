"""The Activity page: the audit feed (``memories.audit.audit_feed``), filtered and paged.

The feed merges two sources (memory versions and admin events), so it has no single
queryset to count: pages are cut from the newest ``page * per_page + 1`` events, which is
also how "Older" knows there is more. Memory events show a snippet of the memory's text beside its id.
"""

from urllib.parse import urlencode

from django.urls import reverse
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from console.forms import AuditFilterForm
from console.pages import render_page, role_required
from memories.audit import audit_feed, snippet
from memories.models import Memory
from memories.validation import MEMORY_ID_RE


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def activity(request):
    """``/activity/?actor=&action=&target=&namespace=&since=&page=``; htmx gets ``#activity-rows``.

    Queries: the session and roles, one slice of history rows, one of audit events, and one
    check of which memory targets still exist (a purged memory has no page to link to).
    """
    form = AuditFilterForm(request.GET)
    context = {"form": form}
    status = 200
    if form.is_valid():
        data = form.cleaned_data
        page, per_page = data["page"], data["per_page"]
        events = audit_feed(
            actor=data["actor"],
            action=data["action"],
            target=data["target"],
            namespace=data["namespace"],
            since=data["since"],
            limit=page * per_page + 1,
        )
        rows = events[(page - 1) * per_page : page * per_page]
        targets = {e.target for e in rows if MEMORY_ID_RE.match(e.target)}
        # Memory ids that still exist, with their current text for events without a version
        # row (e.g. a consolidation's audit event).
        existing = dict(
            Memory.objects.filter(memory_id__in=targets).values_list("memory_id", "content")
        )
        base = reverse("console:activity")
        params = form.params()

        def url(number: int) -> str:
            return f"{base}?{urlencode({**params, 'page': number})}"

        context.update(
            rows=[
                {
                    "event": e,
                    "memory": e.target in targets,
                    "linked": e.target in existing,
                    "snippet": e.snippet or snippet(existing.get(e.target, "")),
                }
                for e in rows
            ],
            page=page,
            newer_url=url(page - 1) if page > 1 else None,
            older_url=url(page + 1) if len(events) > page * per_page else None,
        )
    else:
        status = 400
    return render_page(request, "console/activity.html", context, partial="rows", status=status)
