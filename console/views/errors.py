"""Error pages the project wires in settings (``CSRF_FAILURE_VIEW``)."""

from django.shortcuts import render
from django_htmx.http import reswap, retarget

from console.pages import MESSAGES_TARGET


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
        return reswap(retarget(response, MESSAGES_TARGET), "innerHTML")
    return render(request, "403.html", {"message": message, "title": "Request refused"}, status=403)
