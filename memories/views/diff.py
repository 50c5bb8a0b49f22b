"""Two versions of a memory side by side."""

import json

from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from console.pages import render_page, role_required
from memories.forms import DiffForm
from memories.views.detail import memory_or_404, word_diff

# --- diff -------------------------------------------------------------------------------

# Every field of a version shown side by side (content gets the word diff above them).
DIFF_FIELDS = [
    ("kind", "Kind"),
    ("changed_by", "Changed by"),
    ("history_change_reason", "Reason"),
    ("history_date", "At"),
    ("type", "Type"),
    ("importance", "Importance"),
    ("tags", "Tags"),
    ("keywords", "Keywords"),
    ("conversation_id", "Conversation"),
    ("source", "Source"),
    ("author", "Author"),
    ("metadata", "Metadata"),
    ("expire_at", "Expires"),
    ("deleted_at", "Forgotten at"),
    ("deleted_by", "Forgotten by"),
    ("context", "Context (indexed, not shown)"),
    ("content_hash", "Content hash"),
    ("created_at", "Created"),
    ("updated_at", "Updated"),
]


def _show(value) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if isinstance(value, dict | list):
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    if hasattr(value, "isoformat"):
        # Milliseconds: two versions written in the same second still show why they differ.
        return value.isoformat(sep=" ", timespec="milliseconds")
    return str(value)


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def memory_diff(request, memory_id: str):
    """``/memories/<id>/diff/?a=1&b=3``: content word by word, every other field side by
    side. htmx gets the ``#diff`` fragment. Without ``a``/``b``: the last change."""
    memory = memory_or_404(memory_id)
    rows = {h.version: h for h in memory.history.order_by("history_id")}  # last row wins
    versions = sorted(rows)
    query = request.GET.copy()
    query.setdefault("a", str(max(1, memory.version - 1)))
    query.setdefault("b", str(memory.version))
    form = DiffForm(query, versions=versions)
    context = {"memory": memory, "form": form}
    status = 200
    if form.is_valid():
        old, new = rows[form.cleaned_data["a"]], rows[form.cleaned_data["b"]]
        context.update(
            old=old,
            new=new,
            content_diff=word_diff(old.content, new.content),
            fields=[
                {
                    "label": label,
                    "old": _show(getattr(old, name)),
                    "new": _show(getattr(new, name)),
                    "changed": getattr(old, name) != getattr(new, name),
                    # Multi-line values keep their lines; an empty one is just a dash.
                    "pre": name in ("metadata", "context")
                    and bool(getattr(old, name) or getattr(new, name)),
                }
                for name, label in DIFF_FIELDS
            ],
        )
    else:
        status = 400
    return render_page(request, "memories/memory_diff.html", context, partial="diff", status=status)

