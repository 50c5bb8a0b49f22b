"""Recall from the console: the same ``memory_search`` the API uses, with its explanation."""

import datetime as dt

from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from console.forms import add_service_error
from console.namespaces import namespaces_missing, no_such_namespace
from console.pages import render_page, role_required
from memories import store
from memories.errors import ServiceError
from recalls.act import recall_traced
from search.forms import SearchForm


def _moment(epoch: float | None) -> dt.datetime | None:
    return dt.datetime.fromtimestamp(epoch, tz=dt.UTC) if epoch is not None else None


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def search_page(request):
    """``/search/?user_id=&q=&profile=&limit=&as_of=&include_superseded=``; htmx gets the
    ``#results`` fragment.

    Unlike the API's recall, a reviewer's search does not bump ``access_count`` /
    ``accessed_at``: those feed the agents' recency ranking, and an audit must not change
    what it observes. It is traced in the recall log (interface ``console``).
    """
    submitted = "user_id" in request.GET or "q" in request.GET
    form = SearchForm(request.GET if submitted else None)
    found, error, status = None, None, 200
    if submitted:
        if form.is_valid():
            data = form.cleaned_data
            try:
                found, _ = recall_traced(
                    actor=request.user.get_username(), interface="console", count_hits=False,
                    user_id=data["user_id"],
                    query=data["q"],
                    limit=data["limit"],
                    profile=data["profile"],
                    conversation_id=data["conversation_id"] or None,
                    **form.filter_kwargs(),
                    **form.validity_kwargs(),
                )
            except store.RedisError:
                error, status = (
                    (
                        "The search index (Redis) is unreachable, so recall cannot "
                        "run. Memories are safe in the database; try again once "
                        "Redis is back."
                    ),
                    503,
                )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
        else:
            status = 400
    top = found.results[0].score if found and found.results else 0.0
    # Each result with the end of its validity as a datetime (the hits carry epoch seconds):
    # "superseded by X since T" or "ended T" under the ones that no longer hold (now).
    now = dt.datetime.now(dt.UTC)
    hits = [(hit, until, until is not None and until <= now)
            for hit in (found.results if found else []) for until in [_moment(hit.valid_until)]]
    unknown = bool(
        found is not None and not found.results and namespaces_missing([data["user_id"]])
    )
    return render_page(
        request,
        "search/search.html",
        {
            "form": form,
            "found": found,
            "top_score": top,
            "hits": hits,
            "error": error,
            "unknown_namespace": unknown,
            "unknown_namespace_text": no_such_namespace([data["user_id"]]) if unknown else "",
        },
        partial="results",
        status=status,
    )
