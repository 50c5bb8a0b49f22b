"""Undo consolidation, on the merged memory's page (admin; a reason is required)."""

from django.views.decorators.http import require_POST

from console.pages import role_required
from memories import services
from memories.errors import ServiceError
from memories.forms import ConsolidationUndoForm
from memories.views.detail import _done, _failed, _render_detail, memory_or_404


@require_POST
@role_required("admin")
def memory_consolidation_undo(request, memory_id: str):
    """Restore every source of a merged memory and forget the merged memory, in one
    audited action (``services.consolidation_undo``; the API's ``POST
    /memories/{id}/rollback {"version": 0}`` does the same)."""
    memory = memory_or_404(memory_id)
    form = ConsolidationUndoForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, undo_form=form)
    try:
        restored = services.consolidation_undo(memory_id=memory.memory_id, actor=request.user,
                                               reason=form.cleaned_data["reason"])
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "undo_form", form)
    return _done(request, memory_id,
                 f"Consolidation undone: {len(restored)} memories restored; this merged "
                 f"memory is forgotten.")
