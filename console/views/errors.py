"""Error pages the project wires in settings (``CSRF_FAILURE_VIEW``) and URLs (``handler404``)."""

from django.shortcuts import render
from django.urls import reverse
from django_htmx.http import reswap, retarget

from console.pages import MESSAGES_TARGET, fragment_answer


def csrf_failure(request, reason: str = ""):
    """403 for a failed CSRF check: a small partial for htmx, a page otherwise.

    Usually a stale page (the session or the token changed): reloading fixes it. The htmx
    partial goes into the messages area so the page stays usable (public case B28).
    """
    message = (
        "Your session changed since this page was loaded, so the request was refused "
        "(CSRF check). Reload the page and try again."
    )
    if request.headers.get("HX-Request") == "true":
        response = render(request, "_forbidden.html", {"message": message}, status=403)
        return fragment_answer(reswap(retarget(response, MESSAGES_TARGET), "innerHTML"))
    return render(request, "403.html", {"message": message, "title": "Request refused"}, status=403)


# What a 404 is about, by the URL's first segment: the gone fragment names it and links back.
_KINDS = {"memories": ("This memory", "memories:list", "Back to the memories"),
          "sessions": ("This session", "sessions:list", "Back to the sessions"),
          "jobs": ("This job", "operations:index", "Back to the index"),
          "lab": ("This item", "lab:home", "Back to the lab")}


def _kind(path: str) -> tuple[str, str, str]:
    parts = path.strip("/").split("/")
    first = "jobs" if parts[:2] == ["index", "jobs"] else parts[0]
    return _KINDS.get(first, ("This page", "console:overview", "Back to the overview"))


def page_not_found(request, exception=None):
    """404 (``handler404``, and ``ConsoleNotFoundMiddleware`` for a view's ``Http404`` with
    ``DEBUG`` on). An htmx action on an object
    purged after its page was loaded gets a small fragment saying it is gone, swapped over the
    element it was aimed at (``HX-Reswap: outerHTML``, the target's id kept), so the user sees
    it where they clicked; a plain request gets the full page."""
    first = request.path.strip("/").split("/", 1)[0]
    what, back, label = _kind(request.path)
    if request.headers.get("HX-Request") != "true":
        return render(request, "404.html", {
            "what": what, "back_url": reverse(back), "back_label": label}, status=404)
    target = request.headers.get("HX-Target", "")
    parts = request.path.strip("/").split("/")
    detail = parts[1] if first == "memories" and len(parts) > 1 else ""
    response = render(request, "_gone.html", {
        "what": what, "back_url": reverse(back), "back_label": label,
        "target": target, "detail": detail}, status=404)
    return fragment_answer(reswap(response, "outerHTML") if target else retarget(
        reswap(response, "innerHTML"), MESSAGES_TARGET))
