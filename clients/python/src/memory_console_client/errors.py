"""Exceptions: one class per API status, each carrying the API's error body.

The API answers errors as ``{"error": {"code", "message", "field"}}`` (409 adds
``current_version``). :class:`ApiError` keeps those as attributes; :func:`error_for` picks
the subclass from the status code, so callers can catch ``NotFound`` or ``Conflict`` alone.
"""

from __future__ import annotations

from typing import Any


class MemoryConsoleError(Exception):
    """Base of every exception this package raises."""


class TransportError(MemoryConsoleError):
    """The server could not be reached (connection refused, timeout, broken connection),
    after any retries the call allowed. ``__cause__`` is the httpx exception."""


class ApiError(MemoryConsoleError):
    """The server answered with an error status.

    Attributes: ``status`` (HTTP status), ``code`` (``"invalid"``, ``"not_found"``,
    ``"conflict"``, ...), ``message``, ``field`` (the request field at fault, or None),
    ``current_version`` (409 only), ``body`` (the whole decoded body, or the raw text).
    """

    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 current_version: int | None = None, body: Any = None):
        super().__init__(f"{status} {code}: {message}" + (f" (field {field})" if field else ""))
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.current_version = current_version
        self.body = body


class BadRequest(ApiError):
    """400: the request is malformed; ``field`` names the field."""


class Unauthorized(ApiError):
    """401: missing or unknown bearer token."""


class Forbidden(ApiError):
    """403: the token's role is too low, or the namespace is outside its restriction."""


class NotFound(ApiError):
    """404: unknown id (in any format), or one outside the token's namespaces."""


class Conflict(ApiError):
    """409: the expected ``version`` is stale; ``current_version`` is the current one."""


class PayloadTooLarge(ApiError):
    """413: content over the server's ``MEMORY_MAX_CONTENT_CHARS``."""


class Unavailable(ApiError):
    """503: Redis (the search index) is unreachable; retried for idempotent calls."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: PayloadTooLarge, 503: Unavailable,
}


def error_for(status: int, body: Any) -> ApiError:
    """The exception for an error response (``body``: decoded JSON, or the text when the
    body is not JSON, e.g. a proxy's HTML page)."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        err = {"code": "error", "message": str(body)[:500] or f"HTTP {status}"}
    cls = _BY_STATUS.get(status, ApiError)
    return cls(status, str(err.get("code") or "error"), str(err.get("message") or ""),
               err.get("field"), err.get("current_version"), body)
