"""Purge: erase a memory for good (typed confirmation)."""

from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from console.pages import forbidden, render_page, role_required
from memories import services
from memories.errors import NotFound
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.forms import PurgeForm
from memories.views.detail import memory_or_404

# --- purge ------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required("admin")
def memory_purge(request, memory_id: str):
    """Hard delete (admin) after a typed confirmation: GET shows what goes, POST does it.

    The row and every version of its content go; an audit event without the content stays.
    Then the memory list, with a message. A page rather than a JavaScript dialog, so the
    confirmation also stands without JavaScript and cannot be clicked through by accident.
    """
    memory = memory_or_404(memory_id)
    form = PurgeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            services.memory_purge(
                memory_id=memory.memory_id, actor=request.user, reason=form.cleaned_data["reason"]
            )
        except ServicePermissionDenied as exc:
            return forbidden(request, exc.message)
        except NotFound as exc:
            raise Http404(exc.message) from None
        messages.success(
            request,
            f"Purged {memory_id} and its {memory.version} version"
            f"{'s' if memory.version != 1 else ''}; the audit feed keeps the record.",
        )
        url = reverse("memories:list") + "?" + urlencode({"user_id": memory.user_id})
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    return render_page(
        request,
        "memories/memory_purge.html",
        {"memory": memory, "form": form, "versions": memory.history.count()},
        status=400 if form.is_bound else 200,
    )

