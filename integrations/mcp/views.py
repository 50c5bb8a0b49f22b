"""``/mcp``: the MCP server over Streamable HTTP, in the web process (stateless).

Authenticated like ``/api/v1/``: ``Authorization: Bearer <API token>``; a missing or dead
token is a 401 before any MCP message is read. Every request is served on its own (no
``Mcp-Session-Id``, JSON responses), so any gunicorn process or thread answers any request.
POST only: a stateless server offers no SSE stream to GET (the Streamable HTTP spec's 405)
and no session to DELETE; a GET stream would hold a web thread for as long as its client.
Errors outside the SDK's own JSON-RPC answers (405, 413, a refused Host) are JSON as in the
REST API (``memory_console.middleware.ApiJsonErrorsMiddleware``).

``X-Memory-Namespace: <user_id>`` names the default namespace of the request's tool calls
(``integrations.mcp.caller``): a bad identifier is a 400, a namespace outside a restricted
token's a 403, both naming the header.
"""

from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from integrations.mcp.bridge import serve_http
from integrations.mcp.caller import (
    caller_for_token,
    check_default_namespace,
    forget_default_namespace,
    forget_token,
    use_default_namespace,
    use_token,
)
from integrations.mcp.server import server
from memories.errors import ServiceError

NAMESPACE_HEADER = "X-Memory-Namespace"

# Set by Django from the body it sends; the SDK's own would be a second copy.
_SKIPPED_HEADERS = {"content-length"}


def _bearer(request) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@csrf_exempt  # bearer tokens only: no cookie, so nothing a foreign page could forge
@login_not_required
@require_POST
def mcp_endpoint(request):
    token = _bearer(request)
    caller = caller_for_token(token)
    if caller is None:
        response = JsonResponse({"error": {"code": "unauthorized", "field": None,
                                           "message": "missing or invalid bearer token"}},
                                status=401)
        response["WWW-Authenticate"] = 'Bearer realm="memory-console"'
        return response
    default = request.headers.get(NAMESPACE_HEADER)
    if default is not None:
        try:
            check_default_namespace(caller, default, field=NAMESPACE_HEADER)
        except ServiceError as exc:
            return JsonResponse(exc.as_dict(), status=exc.status)
    marker, named = use_token(token), use_default_namespace(default)
    try:
        reply = serve_http(server, request)
    finally:
        forget_default_namespace(named)
        forget_token(marker)
    response = HttpResponse(reply.body, status=reply.status)
    for name, value in reply.headers:
        if name.lower() not in _SKIPPED_HEADERS:
            response[name] = value
    return response
