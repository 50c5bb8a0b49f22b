"""Serve one HTTP request through the SDK's Streamable HTTP transport from a WSGI thread.

gunicorn (as shipped) runs Django under WSGI, while the ``mcp`` SDK's transport is an ASGI
application. In stateless mode every POST is a self-contained exchange (one JSON-RPC message
in, one JSON response out, no ``Mcp-Session-Id``), so it can be served by a short-lived
``StreamableHTTPSessionManager`` inside the request: ``serve_http`` builds the ASGI scope from
the Django request, runs the manager under asgiref's ``async_to_sync`` (a private event loop
in a helper thread, as Django does for async views under WSGI) and collects the response.

Tools do their database work with ``sync_to_async(thread_sensitive=True)``; under
``async_to_sync`` asgiref runs that back in the request's own thread, so the ORM uses the
request's connection and never sees a running event loop.

Nothing here waits on the real client: the body is read whole before the run, and the answer
is handed to WSGI whole after it. The bridge plays a client that leaves once the answer is
complete, or at ``STREAM_DEADLINE_SECONDS`` at the latest, so a stream (which ends only when
its client leaves) cannot hold the request's thread past that. A tool's own work is bounded
as in the REST API, by the database's and Redis's timeouts.
"""

import logging
from dataclasses import dataclass, field

import anyio
from asgiref.sync import async_to_sync
from django.http.request import split_domain_port
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

# Django already refuses unknown Host headers (ALLOWED_HOSTS) and /mcp takes bearer tokens
# only (no cookies), so the SDK's DNS-rebinding check would add nothing but a second,
# diverging host list.
_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)

# The manager logs its start and stop at INFO: here that is twice per request.
logging.getLogger("mcp.server.streamable_http_manager").setLevel(logging.WARNING)

# The longest a request may wait for an answer that never completes (an SSE stream): the
# view sends POSTs only and the server opens no stream, so this is the backstop for a shape
# the SDK may stream in a later version.
STREAM_DEADLINE_SECONDS = 30.0


@dataclass
class HttpReply:
    """The collected ASGI response: ``status``, ``headers`` as (name, value) strings, ``body``."""

    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def asgi_scope(request) -> dict:
    """The ASGI HTTP scope of a Django ``HttpRequest`` (headers lower-cased, as bytes)."""
    headers = []
    for name, value in request.headers.items():
        headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    # "[::1]:8802", "[::1]", "127.0.0.1:8000", "localhost": split where the port starts.
    domain, port = split_domain_port(request.get_host())
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": request.method, "scheme": request.scheme,
        "path": request.path, "raw_path": request.path.encode(),
        "root_path": "", "query_string": request.META.get("QUERY_STRING", "").encode(),
        "headers": headers,
        "server": (domain.strip("[]"), int(port or (443 if request.is_secure() else 80))),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "state": {},
    }


async def _serve(server, scope: dict, body: bytes, deadline: float) -> HttpReply:
    reply = HttpReply()
    done = anyio.Event()
    leave_at = anyio.current_time() + deadline
    body_sent = False

    async def receive():
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        # The client stays until the answer is complete, or until the deadline: the SDK ends
        # a stream when its client leaves.
        with anyio.CancelScope(deadline=leave_at):
            await done.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            reply.status = message["status"]
            reply.headers = [(k.decode("latin-1"), v.decode("latin-1"))
                             for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            reply.body += message.get("body", b"")
            if not message.get("more_body", False):
                done.set()

    manager = StreamableHTTPSessionManager(
        # The low-level server behind MCPServer: the manager serves that layer (the SDK's
        # own MCPServer.streamable_http_app passes it the same way).
        app=server._lowlevel_server,
        json_response=True, stateless=True, security_settings=_SECURITY)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    done.set()
    return reply


def serve_http(server, request, deadline: float = STREAM_DEADLINE_SECONDS) -> HttpReply:
    """Answer the Django ``request`` with the MCPServer ``server`` (blocking, per request).

    ``deadline``: seconds after which the client counts as gone (an answer still streaming
    then ends with what it has sent)."""
    return async_to_sync(_serve)(server, asgi_scope(request), request.body, deadline)
