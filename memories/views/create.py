"""A new memory from the console (editor): the form, then the new memory's page."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from console.forms import add_service_error
from console.pages import render_page, role_required
from memories import services
from memories.errors import ServiceError
from memories.forms import NewMemoryForm
from memories.models import MemoryType

TEMPLATE = "memories/memory_new.html"


@require_http_methods(["GET", "POST"])
@role_required("editor")
def memory_new(request):
    """GET: the form. POST: ``services.memory_create`` (the API's writer and validation);
    a refusal comes back as the form with the error on the field it names (400, or the
    service's status), a success redirects to the memory's page (POST/redirect/GET), the
    existing memory's page when the same live content is already there."""
    if request.method == "GET":
        form = NewMemoryForm(initial={"type": MemoryType.LONG_TERM,
                                      "user_id": request.GET.get("user_id", "")})
        return render_page(request, TEMPLATE, {"form": form})
    form = NewMemoryForm(request.POST)
    if not form.is_valid():
        return render_page(request, TEMPLATE, {"form": form}, status=400)
    data = form.cleaned_data
    try:
        memory, duplicate = services.memory_create(
            actor=request.user, user_id=data["user_id"],
            conversation_id=data["conversation_id"] or None, type=data["type"],
            content=data["content"], tags=data["tags"], importance=data["importance"],
            metadata=data["metadata"], agent_id=data["agent_id"], run_id=data["run_id"],
        )
    except ServiceError as exc:
        add_service_error(form, exc)
        return render_page(request, TEMPLATE, {"form": form}, status=exc.status)
    if duplicate:
        messages.info(request, "The same memory already exists here: nothing new was written.")
    else:
        messages.success(request, "Memory created.")
    return redirect("memories:detail", memory_id=memory.memory_id)
