"""Memory list (with bulk actions), detail, diff of any two versions, and the changes a
reviewer makes (importance, forget/restore, rollback, promote, purge): forms -> services.

Every change goes through ``memories.services`` (the only writers). A POST answers htmx with
the updated fragment (``#memory-panel`` on the detail page, ``#memory-rows`` in the list),
and a plain browser with a redirect (POST/redirect/GET), so every page works without
JavaScript. Promote and purge move the browser to another page (the new memory, the list):
for htmx that is an ``HX-Redirect``.
"""

import difflib
import json
import re
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, QueryDict
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from memories import access, services
from memories.errors import Conflict, NotFound, ServiceError
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.forms import (
    BulkForm,
    DiffForm,
    ImportanceForm,
    MemoryFilterForm,
    PromoteForm,
    PurgeForm,
    ReasonForm,
    RollbackForm,
    add_service_error,
    bulk_form,
)
from memories.importance import estimate as importance_estimate
from memories.models import Memory, MemoryType
from memories.roles import has_role
from memories.views._common import forbidden, paginate, render_page, role_required

DETAIL = "memories/memory_detail.html"
ESTIMATE_LABELS = {
    "base": "base",
    "emphasis": "emphasis words",
    "date": "a date or time",
    "facts": "numbers or ids",
    "role": "author role",
}


# --- list -------------------------------------------------------------------------------


def _filtered(data: dict):
    memories = Memory.objects.defer("context", "keywords", "metadata")
    if data["user_id"]:
        memories = memories.filter(user_id=data["user_id"])
    if data["conversation_id"]:
        memories = memories.filter(conversation_id=data["conversation_id"])
    if data["type"]:
        memories = memories.filter(type=data["type"])
    if data["state"] == "live":
        memories = memories.filter(deleted_at__isnull=True)
    elif data["state"] == "forgotten":
        memories = memories.filter(deleted_at__isnull=False)
    if data["importance_min"] is not None:
        memories = memories.filter(importance__gte=data["importance_min"])
    if data["importance_max"] is not None:
        memories = memories.filter(importance__lte=data["importance_max"])
    if data["q"]:
        # LIKE: case-insensitive for ASCII on SQLite, for all text on PostgreSQL (UPPER()).
        memories = memories.filter(content__icontains=data["q"])
    # memory_id is unique, so the order is total and pages never overlap (public case B31).
    return memories.order_by("-created_at", "memory_id")


def _list_response(request, query, *, bulk=None, status: int = 200):
    """The list page (or its ``#memory-rows`` fragment) for the filters in ``query``.

    ``bulk`` is a bound BulkForm to show with its errors and the rows it had selected.
    """
    form = MemoryFilterForm(query)
    pager = None
    if form.is_valid():
        pager = paginate(
            request,
            _filtered(form.cleaned_data),
            per_page=form.cleaned_data["per_page"],
            params=form.params(),
            base=reverse("memories:memories-list"),
            number=query.get("page"),
        )
    elif status == 200:
        status = 400
    back = ""
    if pager is not None:
        back = urlencode({**form.params(), "page": pager.page.number})
    selected = set(bulk.data.getlist("memory_ids")) if bulk is not None and bulk.is_bound else set()
    return render_page(
        request,
        "memories/memory_list.html",
        {
            "form": form,
            "pager": pager,
            "can_edit": has_role(request.user, "editor"),
            "bulk_form": bulk or BulkForm(),
            "back": back,
            "selected": selected,
        },
        partial="rows",
        status=status,
    )


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def memory_list(request):
    """Filtered, paginated memories; htmx gets the ``#memory-rows`` fragment.

    Queries: one COUNT and one page SELECT (pinned in tests/views/test_memories.py).
    """
    return _list_response(request, request.GET)


BULK_DONE = {
    "importance": "Importance set to {importance:.2f} on",
    "forget": "Forgot",
    "restore": "Restored",
}
BULK_NOOP = {
    "importance": "already had it",
    "forget": "already forgotten",
    "restore": "already live",
}


@require_POST
@role_required("editor")
def memory_bulk(request):
    """One action on the selected memories (``services.memory_bulk``: all or nothing, one
    version per memory), then the list it came from with a message.

    Without JavaScript: POST/redirect/GET back to the same filters and page.
    """
    form = bulk_form(request.POST)
    # The filters and page the user was looking at; a tampered value only changes the list.
    query = QueryDict(request.POST.get("back", "")[:2000])
    if not form.is_valid():
        return _list_response(request, query, bulk=form, status=400)
    data = form.cleaned_data
    ids = data["memory_ids"]
    before = dict(Memory.objects.filter(memory_id__in=ids).values_list("memory_id", "version"))
    try:
        changed = services.memory_bulk(
            memory_ids=ids,
            action=data["action"],
            importance=data["importance"],
            reason=data["reason"],
            actor=request.user,
        )
    except ServicePermissionDenied as exc:
        return forbidden(request, exc.message)
    except ServiceError as exc:
        add_service_error(form, exc)
        # A selected memory that no longer exists (purged meanwhile) is a conflict with the
        # page the user saw, not a missing page: 409 keeps the list and says which one.
        status = 409 if isinstance(exc, NotFound) else exc.status
        return _list_response(request, query, bulk=form, status=status)
    done = sum(1 for m in changed if m.version != before.get(m.memory_id))
    noop = len(changed) - done
    head = BULK_DONE[data["action"]].format(importance=data["importance"] or 0)
    text = f"{head} {done} memor{'y' if done == 1 else 'ies'}"
    if noop:
        text += f" ({noop} {BULK_NOOP[data['action']]})"
    messages.success(request, text + ".")
    if not request.htmx:
        back = MemoryFilterForm(query)
        params = {**back.params(), "page": query.get("page", "")} if back.is_valid() else {}
        params = {k: v for k, v in params.items() if v}
        url = reverse("memories:memories-list")
        return redirect(f"{url}?{urlencode(params)}" if params else url)
    return _list_response(request, query)


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


def _versions(memory: Memory) -> list[dict]:
    """Every version, newest first, each with what changed since the one before it."""
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
                "diff": word_diff(previous.content, h.content)
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
        "rollback_form": forms.get("rollback_form") or RollbackForm(current_version=memory.version),
    }
    return render_page(request, DETAIL, context, partial="panel", status=status)


def _memory_or_404(memory_id: str) -> Memory:
    return get_object_or_404(Memory, memory_id=memory_id)


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def memory_detail(request, memory_id: str):
    return _render_detail(request, access.with_hits_folded(_memory_or_404(memory_id)))


def _done(request, memory_id: str, message: str):
    messages.success(request, message)
    if request.htmx:
        # The panel fragment carries the message out of band (see memory_detail.html).
        return _render_detail(request, _memory_or_404(memory_id))
    return redirect("memories:memories-detail", memory_id=memory_id)


def _failed(request, memory_id: str, exc: ServiceError, form_name: str, form):
    """A service refused: its message goes on the form, with the service's status."""
    if isinstance(exc, ServicePermissionDenied):
        return forbidden(request, exc.message)
    if isinstance(exc, NotFound) and exc.field == "memory_id":
        raise Http404(exc.message)
    add_service_error(form, exc)
    return _render_detail(
        request, _memory_or_404(memory_id), status=exc.status, **{form_name: form}
    )


@require_POST
@role_required("editor")
def memory_importance(request, memory_id: str):
    """Inline importance edit: a new version of kind ``importance``."""
    memory = _memory_or_404(memory_id)
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
            request, _memory_or_404(memory_id), status=exc.status, importance_form=form
        )
    except ServiceError as exc:
        return _failed(request, memory_id, exc, "importance_form", form)
    if memory.version == before:  # the service writes no version for a no-op
        return _done(request, memory_id, f"Importance is already {memory.importance:.2f}.")
    return _done(
        request, memory_id, f"Importance set to {memory.importance:.2f} (version {memory.version})."
    )


def _state_change(request, memory_id: str, *, service, verb: str):
    memory = _memory_or_404(memory_id)
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
    memory = _memory_or_404(memory_id)
    form = RollbackForm(request.POST, current_version=memory.version)
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
    memory = _memory_or_404(memory_id)
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
    url = reverse("memories:memories-detail", args=[promoted.memory_id])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


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
    memory = _memory_or_404(memory_id)
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


# --- purge ------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required("admin")
def memory_purge(request, memory_id: str):
    """Hard delete (admin) after a typed confirmation: GET shows what goes, POST does it.

    The row and every version of its content go; an audit event without the content stays.
    Then the memory list, with a message. A page rather than a JavaScript dialog, so the
    confirmation also stands without JavaScript and cannot be clicked through by accident.
    """
    memory = _memory_or_404(memory_id)
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
        url = reverse("memories:memories-list") + "?" + urlencode({"user_id": memory.user_id})
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    return render_page(
        request,
        "memories/memory_purge.html",
        {"memory": memory, "form": form, "versions": memory.history.count()},
        status=400 if form.is_bound else 200,
    )
