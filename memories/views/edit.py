"""Edit a memory's content, tags, type and metadata on its page (editor; a reason is
required). A form started from an older version is a conflict: the page says who changed
the memory since and shows the word diff between their text and what the editor typed."""

from django.views.decorators.http import require_POST

from console.pages import role_required
from memories import services
from memories.errors import Conflict, ServiceError
from memories.forms import EditForm
from memories.views.detail import _done, _failed, _render_detail, memory_or_404, word_diff


def _conflict(request, memory_id: str, exc: Conflict, typed: str):
    """The current memory, the editor's input kept, the version moved on (a second Save is
    deliberate), who changed it and the diff current → typed."""
    memory = memory_or_404(memory_id)
    data = request.POST.copy()
    data["version"] = str(memory.version)
    form = EditForm(data)
    form.is_valid()
    last = memory.history.order_by("-history_date", "-history_id").first()
    who = (last.changed_by if last else "") or "someone"
    form.add_error(None, f"{who} changed this memory (now version {memory.version}) after you "
                         f"opened the form. Your text is kept below; Save again to overwrite.")
    return _render_detail(request, memory, status=exc.status, edit_form=form, edit_conflict={
        "who": who, "diff": word_diff(memory.content, typed)})


@require_POST
@role_required("editor")
def memory_edit(request, memory_id: str):
    memory = memory_or_404(memory_id)
    form = EditForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, edit_form=form)
    data, before = form.cleaned_data, memory.version
    try:
        memory = services.memory_update(
            memory_id=memory.memory_id, actor=request.user, reason=data["reason"],
            expected_version=data["version"], content=data["content"], tags=data["tags"],
            type=data["type"], metadata=data["metadata"],
        )
    except Conflict as exc:
        if exc.field == "version":
            return _conflict(request, memory_id, exc, data["content"])
        return _failed(request, memory_id, exc, "edit_form", form)
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "edit_form", form)
    if memory.version == before:
        return _done(request, memory_id, "Nothing changed: no new version written.")
    return _done(request, memory_id, f"Memory edited (version {memory.version}).")
