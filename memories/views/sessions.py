"""Sessions (short-term conversations): list with filters, and one transcript."""

from django.db.models import Count
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from memories.forms import SessionFilterForm
from memories.models import Session
from memories.views._common import paginate, render_page, role_required


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def session_list(request):
    """Sessions, most recently active first; htmx gets the ``#session-rows`` fragment."""
    form = SessionFilterForm(request.GET)
    pager = None
    if form.is_valid():
        sessions = Session.objects.annotate(n_messages=Count("messages")).defer(
            "system_prompt", "metadata"
        )
        if form.cleaned_data["user_id"]:
            sessions = sessions.filter(user_id=form.cleaned_data["user_id"])
        if form.cleaned_data["agent_id"]:
            sessions = sessions.filter(agent_id=form.cleaned_data["agent_id"])
        pager = paginate(
            request,
            sessions.order_by("-updated_at", "session_id"),
            per_page=form.cleaned_data["per_page"],
            params=form.params(),
            base=reverse("memories:memories-sessions"),
        )
    return render_page(
        request,
        "memories/session_list.html",
        {"form": form, "pager": pager},
        partial="rows",
        status=200 if pager else 400,
    )


@require_GET
@role_required("viewer")
def session_detail(request, session_id: str):
    """The whole transcript from the database (it outlives the Redis hot window)."""
    session = get_object_or_404(Session, session_id=session_id)
    return render_page(
        request,
        "memories/session_detail.html",
        {
            "session": session,
            "messages_": session.messages.order_by("seq"),
        },
    )
