"""The memory detail page and its actions: importance, forget, restore, rollback, promote."""

import difflib
import json
import re

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, render_page, role_required
from memories import access, services
from memories.errors import Conflict, NotFound, ServiceError
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.forms import (
    ConsolidationUndoForm,
    DiffForm,
    EditForm,
    ImportanceForm,
    PromoteForm,
    ReasonForm,
    RollbackForm,
)
from memories.history import rollback_targets
from memories.importance import estimate as importance_estimate
from memories.models import Memory, MemoryType
from memories.timeline import supersedes_of, timeline
from memories.validity_forms import EndFactForm, RevalidateForm
from recalls.readers import memory_recalls

DETAIL = "memories/memory_detail.html"
HEADLINE_CHARS = 60
RECENT_RECALLS = 10  # questions listed in the memory's Recalls block

ESTIMATE_LABELS = {
    "base": "base",
    "emphasis": "emphasis words",
    "date": "a date or time",
    "facts": "numbers or ids",
    "role": "author role",
}


# --- detail -----------------------------------------------------------------------------

# A word (or a punctuation mark) with the white space after it: replaced runs of words then
# read as one change instead of word/space/word fragments. Leading white space is its own token.
_TOKENS = re.compile(r"\w+\s*|[^\w\s]\s*|\s+")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``[(op, text)]`` with op in same/del/ins, by words (white space kept exactly)."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("ins", "".join(b[j1:j2])))
    return out


# How much unchanged text a folded diff keeps on each side of a change, and how much of a
# long inserted or deleted run it shows (its head and tail), in characters.
DIFF_CONTEXT = 80
DIFF_RUN = 400


def _elide(text: str, *, head: int, tail: int) -> list[tuple[str, str]]:
    """``text`` as ``[(op, text)]`` pieces keeping its first ``head`` and last ``tail``
    characters (cut at white space when there is some near the cut) with a ``("gap", "")``
    between them; the whole of ``text`` when the gap would hide little."""
    if len(text) <= head + tail + DIFF_CONTEXT:
        return [("same", text)]
    start = text[:head]
    start = start[:start.rfind(" ") + 1] if start.rfind(" ") > head // 2 else start
    end = text[len(text) - tail:] if tail else ""
    end = end[end.find(" ") + 1:] if 0 <= end.find(" ") < tail // 2 else end
    return [p for p in (("same", start), ("gap", ""), ("same", end)) if p[0] == "gap" or p[1]]


def folded_diff(diff: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``word_diff``'s output with the long unchanged stretches (and the middle of very long
    changed runs) replaced by ``("gap", "")``: what changed, with ``DIFF_CONTEXT`` characters
    of unchanged text around each change, so a long memory's history stays short."""
    out = []
    for n, (op, text) in enumerate(diff):
        if op == "same":
            head = DIFF_CONTEXT if n > 0 else 0  # text before the first change: its end only
            tail = DIFF_CONTEXT if n < len(diff) - 1 else 0
            out += _elide(text, head=head, tail=tail)
        else:
            out += [(op if piece == "same" else piece, part)
                    for piece, part in _elide(text, head=DIFF_RUN, tail=DIFF_RUN)]
    return out


def _versions(memory: Memory) -> list[dict]:
    """Every version, newest first, each with what changed since the one before it (its
    content as a folded word diff, :func:`folded_diff`)."""
    rows, previous = [], None
    for h in memory.history.order_by("history_date", "history_id"):
        changes = []
        if previous is not None:
            if h.importance != previous.importance:
                changes.append(f"importance {previous.importance:.2f} → {h.importance:.2f}")
            if h.type != previous.type:
                changes.append(f"type {previous.type} → {h.type}")
            if h.tags != previous.tags:
                changes.append("tags " + (", ".join(h.tags) or "none"))
        rows.append(
            {
                "h": h,
                "forgotten": h.deleted_at is not None,
                "changes": changes,
                "diff": folded_diff(word_diff(previous.content, h.content))
                if previous is not None and h.content != previous.content
                else None,
            }
        )
        previous = h
    rows.reverse()
    return rows


def _render_detail(request, memory: Memory, *, status: int = 200, **forms):
    """The detail page (or its ``#memory-panel`` fragment) with fresh forms, except the
    bound one passed in ``forms`` so its errors show where the user typed."""
    estimate = importance_estimate(memory.content, author=memory.author)
    versions = _versions(memory)
    context = {
        "memory": memory,
        # The page's title and heading: the content's start, white space runs as one space.
        "headline": Truncator(" ".join(memory.content.split())).chars(HEADLINE_CHARS),
        "versions": versions,
        # The estimate the write path makes when no importance is given (services.py).
        "estimate": estimate,
        "estimate_parts": [
            (name, amount, ESTIMATE_LABELS.get(name, name))
            for name, amount in estimate.parts.items()
        ],
        "promotable": _promotable(memory),
        "compare_form": DiffForm(
            initial={"a": max(1, memory.version - 1), "b": memory.version},
            versions=[v["h"].version for v in reversed(versions)],
        ),
        "promote_form": forms.get("promote_form") or PromoteForm(),
        "metadata_json": json.dumps(memory.metadata, indent=2, ensure_ascii=False),
        "can_edit": has_role(request.user, "editor"),
        "can_admin": has_role(request.user, "admin"),
        "importance_form": forms.get("importance_form")
        or ImportanceForm(initial={"importance": memory.importance, "version": memory.version}),
        "reason_form": forms.get("reason_form") or ReasonForm(),
        "rollback_form": forms.get("rollback_form")
        or RollbackForm(targets=rollback_targets(memory)),
        "undo_form": forms.get("undo_form") or ConsolidationUndoForm(),
        "edit_form": forms.get("edit_form") or EditForm.for_memory(memory),
        "edit_conflict": forms.get("edit_conflict"),
        # Facts over time: the chain this memory stands in (oldest first), and the forms
        # that end it or make it hold again (memories/views/validity.py).
        "timeline": timeline(memory),
        "supersedes": supersedes_of([memory.memory_id])[memory.memory_id],
        "ended": memory.valid_until is not None and memory.valid_until <= timezone.now(),
        "end_form": forms.get("end_form") or EndFactForm(),
        "revalidate_form": forms.get("revalidate_form") or RevalidateForm(),
        # How often the memory was recalled (within the recall log's retention), the
        # recent questions linked to their recall pages.
        "recalled": memory_recalls(memory.memory_id, recent=RECENT_RECALLS),
    }
    return render_page(request, DETAIL, context, partial="panel", status=status)


def memory_or_404(memory_id: str) -> Memory:
    return get_object_or_404(Memory, memory_id=memory_id)


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def memory_detail(request, memory_id: str):
    return _render_detail(request, access.with_hits_folded(memory_or_404(memory_id)))


def _done(request, memory_id: str, message: str):
    messages.success(request, message)
    if request.htmx:
        # The panel fragment carries the message out of band (see memory_detail.html).
        return _render_detail(request, memory_or_404(memory_id))
    return redirect("memories:detail", memory_id=memory_id)


def _failed(request, memory_id: str, exc: ServiceError, form_name: str, form):
    """A service refused: its message goes on the form, with the service's status."""
    if isinstance(exc, ServicePermissionDenied):
        return forbidden(request, exc.message)
    if isinstance(exc, NotFound) and exc.field == "memory_id":
        raise Http404(exc.message)
    add_service_error(form, exc)
    return _render_detail(
        request, memory_or_404(memory_id), status=exc.status, **{form_name: form}
    )


@require_POST
@role_required("editor")
def memory_importance(request, memory_id: str):
    """Inline importance edit: a new version of kind ``importance``."""
    memory = memory_or_404(memory_id)
    form = ImportanceForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, importance_form=form)
    before = memory.version
    try:
        memory = services.memory_update(
            memory_id=memory.memory_id,
            actor=request.user,
            importance=form.cleaned_data["importance"],
            reason=form.cleaned_data["reason"],
            expected_version=form.cleaned_data["version"],
        )
    except Conflict as exc:
        # Someone changed the memory since this page was loaded. Show the current state with
        # the value the user typed and the current version, so a second Save is deliberate.
        data = request.POST.copy()
        data["version"] = str(exc.extra.get("current_version", ""))
        form = ImportanceForm(data)
        form.is_valid()
        form.add_error(None, exc.message)
        return _render_detail(
            request, memory_or_404(memory_id), status=exc.status, importance_form=form
        )
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "importance_form", form)
    if memory.version == before:  # the service writes no version for a no-op
        return _done(request, memory_id, f"Importance is already {memory.importance:.2f}.")
    return _done(
        request, memory_id, f"Importance set to {memory.importance:.2f} (version {memory.version})."
    )


def _state_change(request, memory_id: str, *, service, verb: str):
    memory = memory_or_404(memory_id)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, reason_form=form)
    before = memory.version
    try:
        memory = service(
            memory_id=memory.memory_id, actor=request.user, reason=form.cleaned_data["reason"]
        )
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "reason_form", form)
    if memory.version == before:  # e.g. a second click on Forget: nothing to do
        return _done(request, memory_id, f"The memory was already {verb}.")
    return _done(request, memory_id, f"Memory {verb} (version {memory.version}).")


@require_POST
@role_required("editor")
def memory_forget(request, memory_id: str):
    """Soft delete: leaves search and the index; the row and its history stay."""
    return _state_change(request, memory_id, service=services.memory_forget, verb="forgotten")


@require_POST
@role_required("editor")
def memory_restore(request, memory_id: str):
    return _state_change(request, memory_id, service=services.memory_restore, verb="restored")


@require_POST
@role_required("admin")
def memory_rollback(request, memory_id: str):
    """A new version equal to an earlier one (admin; a reason is required)."""
    memory = memory_or_404(memory_id)
    form = RollbackForm(request.POST, targets=rollback_targets(memory))
    if not form.is_valid():
        return _render_detail(request, memory, status=400, rollback_form=form)
    version = form.cleaned_data["version"]
    try:
        memory = services.memory_rollback(
            memory_id=memory.memory_id,
            version=version,
            actor=request.user,
            reason=form.cleaned_data["reason"],
        )
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "rollback_form", form)
    return _done(
        request, memory_id, f"Rolled back to version {version}; now at version {memory.version}."
    )


# --- promote ----------------------------------------------------------------------------


def _promotable(memory: Memory) -> bool:
    """What services.memory_promote accepts: anything but a user-wide long-term memory."""
    return not memory.is_forgotten and not (
        memory.type == MemoryType.LONG_TERM and memory.conversation_id is None
    )


@require_POST
@role_required("editor")
def memory_promote(request, memory_id: str):
    """A working, short-term or conversation memory → a user-wide long-term one (a new
    memory, deduplicated); the browser goes to that memory."""
    memory = memory_or_404(memory_id)
    form = PromoteForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, memory, status=400, promote_form=form)
    try:
        promoted, deduplicated = services.memory_promote(
            memory_id=memory.memory_id, actor=request.user, reason=form.cleaned_data["reason"]
        )
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "promote_form", form)
    if deduplicated:
        messages.info(
            request,
            f"{memory_id} was already a user-wide long-term memory: this one (deduplicated).",
        )
    else:
        messages.success(request, f"Promoted {memory_id} to this user-wide long-term memory.")
    url = reverse("memories:detail", args=[promoted.memory_id])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)

