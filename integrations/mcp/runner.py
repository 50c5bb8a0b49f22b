"""Run a tool's Django work and map its errors to MCP.

Tool bodies are plain sync functions ``fn(caller, **arguments)`` over the services and
selectors; ``call_tool_body`` runs one with asgiref's ``sync_to_async(thread_sensitive=True)``
(the request's own thread under HTTP, one shared thread under stdio).

Errors keep the API's ``{"error": {"code", "message", "field"}}``:
- a tool answers a failed call with an error result (``isError``: the model reads it and can
  correct the field), its ``structuredContent`` the API's error body plus ``status``, the
  HTTP status the REST API gives the same failure (400, 401, 403, 404, 409, 413, 503);
- a resource read or a prompt has no error result in MCP: it raises a JSON-RPC error whose
  ``data`` is that same body, ``code`` from ``JSONRPC_CODES``.
"""

import json
import logging

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from integrations.mcp.caller import current_caller
from integrations.metrics.registry import count_redis_error
from memories import store
from memories.errors import ServiceError

log = logging.getLogger(__name__)

# JSON-RPC error codes of resource reads, by HTTP status: -32602 is JSON-RPC's invalid
# params, -32002 MCP's "resource not found"; -32003/-32004 are ours (the implementation
# range -32000..-32099), as is -32005 for an unreachable Redis.
JSONRPC_CODES = {400: INVALID_PARAMS, 404: -32002, 403: -32003, 401: -32004, 409: -32006,
                 413: -32007, 503: -32005}

# Under stdio the work runs in one long-lived thread with no request cycle around it, so
# its database connection is recycled between calls as a request would recycle it.
_between_calls = {"recycle": False}


def recycle_connections_between_calls() -> None:
    _between_calls["recycle"] = True


def error_body(exc: Exception) -> dict:
    """``{"error": {"code", "message", "field"}, "status"}`` for an exception a body raised
    (ServiceError, a pydantic ValidationError of the arguments, RedisError)."""
    if isinstance(exc, ServiceError):
        return {**exc.as_dict(), "status": exc.status}
    if isinstance(exc, ValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        field = ".".join(str(p) for p in first.get("loc", [])) or None
        message = (f"unknown field {field!r}" if first.get("type") == "extra_forbidden"
                   else f"{field}: {first.get('msg', 'invalid value')}")
        return {"error": {"code": "invalid", "message": message, "field": field},
                "status": 400}
    if isinstance(exc, store.RedisError):
        count_redis_error("mcp")
        return {"error": {"code": "unavailable", "field": None,
                          "message": "the search index (Redis) is unreachable; try again shortly"},
                "status": 503}
    raise exc


def _invoke(fn, arguments: dict):
    if _between_calls["recycle"]:
        close_old_connections()
    try:
        return fn(current_caller(), **arguments)
    finally:
        if _between_calls["recycle"]:
            close_old_connections()


def error_result(body: dict) -> CallToolResult:
    """The error result of a tool call: ``body`` as structured content and as text."""
    return CallToolResult(is_error=True, structured_content=body,
                          content=[TextContent(type="text", text=json.dumps(body))])


async def call_tool_body(fn, **arguments):
    """``fn(caller, **arguments)``'s result, or an error result carrying the API's error."""
    try:
        return await sync_to_async(_invoke, thread_sensitive=True)(fn, arguments)
    except (ServiceError, ValidationError, store.RedisError) as exc:
        return error_result(error_body(exc))


async def call_body(fn, **arguments):
    """``fn(caller, **arguments)``'s value, or an MCPError carrying the API's error (what a
    resource read or a prompt answers: neither has an error result)."""
    try:
        return await sync_to_async(_invoke, thread_sensitive=True)(fn, arguments)
    except (ServiceError, ValidationError, store.RedisError) as exc:
        body = error_body(exc)
        raise MCPError(code=JSONRPC_CODES.get(body["status"], INVALID_PARAMS),
                       message=body["error"]["message"], data=body) from None


async def read_resource_body(fn, **arguments) -> str:
    """``fn(caller, **arguments)`` as JSON text, or an MCPError carrying the API's error."""
    return json.dumps(await call_body(fn, **arguments), ensure_ascii=False)
