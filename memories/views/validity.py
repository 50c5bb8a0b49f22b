"""A memory's validity on its page: "End this fact" (``services.memory_invalidate``: it no
longer holds, with no replacement) and "Revalidate" (``services.memory_revalidate``: it
holds again, undoing an end or a supersession). Editor; a reason is required for both."""

from django.utils import timezone
from django.views.decorators.http import require_POST

from console.pages import role_required
from memories import services
from memories.errors import InvalidInput, ServiceError
from memories.validity_forms import EndFactForm, RevalidateForm
from memories.views.detail import _done, _failed, _render_detail, memory_or_404


@require_POST
@role_required("editor")
def memory_end(request, memory_id: str):
    memory = memory_or_404(memory_id)
    form = EndFactForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, end_form=form)
    try:
        memory = services.memory_invalidate(
            memory_id=memory.memory_id, actor=request.user, reason=form.cleaned_data["reason"],
            valid_until=form.cleaned_data["valid_until"])
    except InvalidInput as exc:
        if exc.field == "valid_until":  # the service names the bound in ISO; say it plainly
            began = timezone.localtime(memory.valid_from)
            exc = InvalidInput(f"The end must not be before the fact began "
                               f"({began:%Y-%m-%d %H:%M}).", field="valid_until")
        return _failed(request, memory_id, exc, "end_form", form)
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "end_form", form)
    return _done(request, memory_id, f"Fact ended {timezone.localtime(memory.valid_until):%Y-%m-%d %H:%M} "
                                     f"(version {memory.version}); Revalidate undoes it.")


@require_POST
@role_required("editor")
def memory_revalidate(request, memory_id: str):
    memory = memory_or_404(memory_id)
    form = RevalidateForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, revalidate_form=form)
    before = memory.version
    try:
        memory = services.memory_revalidate(
            memory_id=memory.memory_id, actor=request.user, reason=form.cleaned_data["reason"])
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "revalidate_form", form)
    if memory.version == before:
        return _done(request, memory_id, "The fact already holds: nothing changed.")
    return _done(request, memory_id, f"The fact holds again (version {memory.version}).")
