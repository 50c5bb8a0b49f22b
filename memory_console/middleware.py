from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect

from memories.errors import InvalidInput, TooLarge
from memories.json_input import load_json
from memories.validation import check_storable_text


class ConsoleLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Login required for every page; the JSON API authenticates with bearer tokens instead
    (answering 401 in JSON rather than redirecting an agent to a login form)."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)

    def handle_no_permission(self, request, view_func):
        # An expired session on an HTMX request would swap the login page into the middle
        # of the page; send the whole window there instead, and back afterwards.
        if not getattr(request, "htmx", False):
            return super().handle_no_permission(request, view_func)
        login = redirect_to_login(
            request.htmx.current_url_abs_path or request.get_full_path(),
            resolve_url(self.get_login_url(view_func)),
            self.get_redirect_field_name(view_func),
        )
        return HttpResponseClientRedirect(login["Location"])


class ApiJsonErrorsMiddleware:
    """Every 4xx/5xx under /api/ and at /mcp answers JSON ``{"error": {"code", "message",
    "field"}}``, also those produced outside the API's own handlers (unknown path, method not
    allowed, a refused Host), so agents never have to parse an HTML error page. A body over
    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a 413 on both; text no database can store is refused
    here for /api/ only (the MCP tools answer it themselves, as an error result)."""

    CODES = {400: "invalid", 401: "unauthorized", 403: "forbidden", 404: "not_found",
             405: "method_not_allowed", 406: "not_acceptable", 409: "conflict",
             413: "too_large"}
    MCP_PATH = "/mcp"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        api = request.path_info.startswith("/api/")
        mcp = request.path_info == self.MCP_PATH
        refused = (self._unstorable_input(request) if api
                   else self._too_large(request) if mcp else None)
        if refused is not None:
            return refused
        response = self.get_response(request)
        if ((api or mcp) and response.status_code >= 400
                and not response.get("Content-Type", "").startswith("application/json")):
            status = response.status_code
            body = {"error": {"code": self.CODES.get(status, "error"),
                              "message": response.reason_phrase or "error", "field": None}}
            new = JsonResponse(body, status=status)
            if response.has_header("Allow"):
                new["Allow"] = response["Allow"]
            return new
        return response

    @staticmethod
    def _body(request) -> bytes:
        """The request body; TooLarge (413) when it is over ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""
        try:
            return request.body
        except RequestDataTooBig:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            raise TooLarge(f"the request body is over the {limit:,}-byte limit "
                           "(DATA_UPLOAD_MAX_MEMORY_SIZE)", limit=limit) from None

    @classmethod
    def _too_large(cls, request):
        """A 413 for a body over the limit, read here: the view's own read would raise
        Django's HTML 400."""
        try:
            cls._body(request)
        except TooLarge as exc:
            return JsonResponse(exc.as_dict(), status=exc.status)
        return None

    @classmethod
    def _unstorable_input(cls, request):
        """Refuse, before any view runs: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413),
        JSON nested deeper than the limit (400), and text no database can store (lone
        surrogates, NUL) in query parameters or a JSON body (400 naming the field).

        Whatever the Content-Type: the API parses any body as JSON, so a check that trusted
        the header let ``application/octet-stream`` through. A body that is not JSON is left
        to the API, which answers its own 400. The writers check the text again themselves
        (``memories.validation``), so ways in that skip this middleware are held too.
        """
        if "\x00" in request.path_info:
            # No id holds NUL (PostgreSQL cannot even compare one): unknown, in any format.
            return JsonResponse({"error": {"code": "not_found", "field": None,
                                           "message": "no such resource"}}, status=404)
        try:
            for name, values in request.GET.lists():
                check_storable_text(name, name)
                for value in values:
                    check_storable_text(value, name)
            body = cls._body(request)
            if body and body.lstrip()[:1] in (b"{", b"["):
                try:
                    data = load_json(body, what="the request body")
                except InvalidInput as exc:
                    if "limit" in exc.extra:
                        raise
                    return None  # not JSON: the API's own parser answers
                check_storable_text(data)
        except (InvalidInput, TooLarge) as exc:
            return JsonResponse(exc.as_dict(), status=exc.status)
        return None


class ConsoleNotFoundMiddleware:
    """A page's ``Http404`` (an unknown session, job, memory, run …) answers the console's own
    404 page or htmx fragment (``console.views.errors.page_not_found``) with ``DEBUG`` on too,
    where Django would show its technical 404 page. A URL that matches no pattern never
    reaches a view, so with ``DEBUG`` on it still gets Django's list of URL patterns; the
    API answers its own JSON errors."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, Http404) or request.path_info.startswith("/api/"):
            return None
        from console.views.errors import page_not_found  # the console's views load late

        return page_not_found(request, exception)
