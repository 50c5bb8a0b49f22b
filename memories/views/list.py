"""The memory list: filters, pages, bulk actions."""

from urllib.parse import urlencode

from django.contrib import messages
from django.http import QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, paginate, render_page, role_required
from memories import listing, services
from memories.errors import NotFound, ServiceError
from memories.errors import PermissionDenied as ServicePermissionDenied
from memories.forms import BulkForm, MemoryFilterForm, bulk_form
from memories.models import Memory

# --- list -------------------------------------------------------------------------------


def _search_url(data: dict) -> str:
    """The Search page ranking the list's text (``data``: a valid filter form's) in its
    namespace; "" unless both are given."""
    if not (data["user_id"] and data["q"].strip()):
        return ""
    query = urlencode({"user_id": data["user_id"], "q": data["q"]})
    return f"{reverse('search:search')}?{query}"


def _list_response(request, query, *, bulk=None, status: int = 200):
    """The list page (or its ``#memory-rows`` fragment) for the filters in ``query``.

    ``bulk`` is a bound BulkForm to show with its errors and the rows it had selected.
    """
    form = MemoryFilterForm(query)
    pager, search_url = None, ""
    if form.is_valid():
        search_url = _search_url(form.cleaned_data)
        pager = paginate(
            request,
            listing.memory_list(form.filters()),
            per_page=form.cleaned_data["per_page"],
            params=form.params(),
            base=reverse("memories:list"),
            number=query.get("page"),
        )
    elif status == 200:
        status = 400
    back = ""
    if pager is not None:
        back = urlencode({**form.params(), "page": pager.page.number})
        listing.add_forget_reasons(pager.page)
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
            "search_url": search_url,
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
        url = reverse("memories:list")
        return redirect(f"{url}?{urlencode(params)}" if params else url)
    return _list_response(request, query)

