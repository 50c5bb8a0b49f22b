"""What every console view shares: one view, two renderings; role checks; pagination.

A page view renders its full template for a normal request and only the named partial
(``template#partial``) for an htmx request, so every page works without JavaScript and htmx
only makes it faster (django-htmx ``example/views.py``, STYLE B2).
"""

from dataclasses import dataclass
from functools import wraps
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.shortcuts import render
from django_htmx.http import reswap, retarget

from accounts.roles import has_role, role_of
from memories import store

# The element every page has for flash messages; small error partials are swapped into it.
MESSAGES_TARGET = "#messages"

# Marks an answer made for the element an htmx request targets: a fragment, a form with its
# errors, a refusal, "no longer exists". htmx swaps it, a 4xx too, as base.html's
# responseHandling says; static/console.js keeps it from django-htmx's debug error handler
# (DEBUG on), which would show a 400/403/404 as the whole page: that handler is for the
# error pages no view made (Django's technical 404 and 500 pages).
FRAGMENT_HEADER = "X-Console-Fragment"


def fragment_answer(response):
    """``response``, marked as made for its htmx target (:data:`FRAGMENT_HEADER`)."""
    response[FRAGMENT_HEADER] = "1"
    return response


def wants_fragment(request) -> bool:
    """An htmx swap wants the partial; an htmx history restore (cache miss) wants the page."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _redis_down() -> bool:
    # Called by the template only when base.html renders (never for a partial), so an htmx
    # swap costs no PING. Looked up through the module so tests can patch it.
    return not store.redis_available()


def _redis_state() -> str:
    # As _redis_down: only the banner calls it. "ok", "full" (refuses writes) or "down".
    return store.redis_state()


def render_page(
    request, template: str, context: dict, *, partial: str | None = None, status: int = 200
):
    """Render ``template`` or, for an htmx swap, only ``template#partial``."""
    context = {**context, "redis_down": _redis_down, "redis_state": _redis_state}
    if not wants_fragment(request):
        return render(request, template, context, status=status)
    if partial:
        template = f"{template}#{partial}"
        context["fragment"] = True
    return fragment_answer(render(request, template, context, status=status))


REDIS_DOWN_MESSAGE = (
    "Redis is unreachable, so this could not be done: the job queues and the search index "
    "live there. Nothing was changed; try again once Redis is back."
)


def refuse(request, message: str, *, status: int, title: str = ""):
    """An action refused with a clear message and nothing changed: the full layout for a
    page, a small partial for htmx.

    The htmx partial is swapped into the messages area (not the element that asked), so a
    refused action leaves the page as it was and says why.
    """
    if request.htmx:
        response = render(request, "_forbidden.html", {"message": message}, status=status)
        return fragment_answer(reswap(retarget(response, MESSAGES_TARGET), "innerHTML"))
    context = {"message": message, "redis_down": _redis_down, "redis_state": _redis_state}
    if title:
        context["title"] = title
    return render(request, "403.html", context, status=status)


def forbidden(request, message: str):
    """403: the user's role does not allow this (see :func:`refuse`)."""
    return refuse(request, message, status=403)


def bad_request(request, message: str):
    """400 for a button whose hidden input was not what the page sent (see :func:`refuse`)."""
    return refuse(request, message, status=400, title="Bad request")


REDIS_FULL_MESSAGE = (
    "Redis is full (maxmemory reached), so this could not be done: it refuses writes until "
    "it has room. Memories are still saved to the database and re-indexed once it has."
)


def redis_unavailable(request, message: str = REDIS_DOWN_MESSAGE):
    """503 when an action needs Redis and it failed: a clear message, never a 500. A Redis
    that answers but refuses writes is named full, not unreachable."""
    if message == REDIS_DOWN_MESSAGE and store.redis_state() == "full":
        return refuse(request, REDIS_FULL_MESSAGE, status=503, title="Redis is full")
    return refuse(request, message, status=503, title="Redis is unreachable")


def role_required(role: str):
    """Refuse (403, see :func:`forbidden`) users below ``role``. Login itself is enforced by
    the project's LoginRequiredMiddleware before any view runs."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not has_role(request.user, role):
                current = role_of(request.user)
                who = f"your role is {current}" if current else "your account has no role yet"
                return forbidden(
                    request,
                    f"This needs the {role} role; {who}. Ask an admin if you need more access.",
                )
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


@dataclass
class PageLink:
    label: str
    url: str | None  # None: the ellipsis or the current page (no link)
    current: bool = False


@dataclass
class Pager:
    page: Page
    links: list[PageLink]
    previous_url: str | None
    next_url: str | None


def paginate(
    request,
    queryset,
    *,
    per_page: int,
    params: dict[str, str],
    base: str,
    number: str | int | None = None,
) -> Pager:
    """One page of ``queryset`` and links that carry every active filter in ``params``.

    Links are built from the validated filters rather than copied from the request, so a
    page link never drops a filter (public case B31) and never repeats ``page``. The
    queryset must be totally ordered (a unique tie-breaker) or rows could repeat or vanish
    between pages. ``number`` overrides ``?page=`` (a POST re-rendering the page it came from).
    """
    paginator = Paginator(queryset, per_page)
    page = paginator.get_page(request.GET.get("page") if number is None else number)

    def url(number: int) -> str:
        return f"{base}?{urlencode({**params, 'page': number})}"

    links = []
    if paginator.num_pages > 1:
        for number in paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1):
            if number == paginator.ELLIPSIS:
                links.append(PageLink(str(number), None))
            else:
                links.append(PageLink(str(number), url(number), number == page.number))
    return Pager(
        page=page,
        links=links,
        previous_url=url(page.previous_page_number()) if page.has_previous() else None,
        next_url=url(page.next_page_number()) if page.has_next() else None,
    )
