"""The web process's gunicorn worker (``worker_class`` in ``gunicorn_conf``): gthread, whose
refusals of a request line or headers over gunicorn's limits answer in the API's JSON error
shape (``{"error": {"code", "message", "field", "limit"}}``) instead of gunicorn's HTML page,
and whose threads no slow client holds without bound.

gthread hands a connection to a thread once its first bytes arrive, and the thread then reads
the request line, headers and body with blocking reads that never time out: a client sending
a byte every few seconds ("slowloris") held a thread for as long as it liked, and a few such
clients held them all. Every read of a request here shares one deadline
(``WEB_REQUEST_READ_SECONDS`` from the request's first read, default 30): past it, a request
still in its headers is answered 408 in JSON and closed, and one whose body the application
is reading gets ``RequestReadTimeout`` there (Django answers it 400).

gunicorn refuses such a request before any of the application runs, so the API's own error
handling (``memory_console.middleware.ApiJsonErrorsMiddleware``) never sees it, and the path
is unknown (the line was not read whole): every such refusal is JSON, pages' too. Other
errors keep gunicorn's handling.
"""

import json
import math
import os
import time

from django.core.exceptions import BadRequest
from gunicorn import util
from gunicorn.http.errors import LimitRequestHeaders, LimitRequestLine
from gunicorn.workers import gthread

# gunicorn's own largest request line, and the value ``gunicorn_conf`` sets: everything the
# API takes in a query string fits (ids of 128 characters, a judgment's query of 1000 ASCII
# characters percent-encoded), and nginx's default large_client_header_buffers is 8 kB.
REQUEST_LINE_MAX = 8190
# Seconds every read of one request may take together (line, headers and body).
REQUEST_READ_SECONDS = float(os.environ.get("WEB_REQUEST_READ_SECONDS") or 30)


class RequestReadTimeout(BadRequest):
    """A request whose bytes did not all arrive within ``REQUEST_READ_SECONDS``."""


class _ReadDeadline:
    """A client socket whose reads share one deadline: each read waits at most what is left
    of it, and none starts past it. Everything else is the socket's own."""

    def __init__(self, sock):
        self._sock = sock
        self.deadline = math.inf

    def start(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def _wait(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RequestReadTimeout(f"the request did not arrive within "
                                     f"{REQUEST_READ_SECONDS:g} s")
        self._sock.settimeout(left)

    def recv(self, *args):
        self._wait()
        try:
            return self._sock.recv(*args)
        except TimeoutError:
            raise RequestReadTimeout(f"the request did not arrive within "
                                     f"{REQUEST_READ_SECONDS:g} s") from None

    def recv_into(self, *args):
        self._wait()
        try:
            return self._sock.recv_into(*args)
        except TimeoutError:
            raise RequestReadTimeout(f"the request did not arrive within "
                                     f"{REQUEST_READ_SECONDS:g} s") from None

    def __getattr__(self, name):
        return getattr(self._sock, name)


class ThreadWorker(gthread.ThreadWorker):
    def handle(self, conn):
        # Wrapped before the connection's first read, so its parser reads through it; the
        # deadline starts again with each request of a kept-alive connection.
        if not isinstance(conn.sock, _ReadDeadline):
            conn.sock = _ReadDeadline(conn.sock)
        conn.sock.start(REQUEST_READ_SECONDS)
        try:
            return super().handle(conn)
        finally:
            conn.sock.deadline = math.inf  # between requests the poller waits, not a read

    def handle_error(self, req, client, addr, exc):
        if isinstance(exc, RequestReadTimeout):
            status, reason, code = 408, "Request Timeout", "request_timeout"
            limit = REQUEST_READ_SECONDS
            message = str(exc)
        elif isinstance(exc, LimitRequestLine):
            status, reason, code = 414, "URI Too Long", "uri_too_long"
            limit = self.cfg.limit_request_line
            message = (f"the request line is over the {limit:,}-byte limit: shorten the "
                       "query string")
        elif isinstance(exc, LimitRequestHeaders):
            status, reason, code = 431, "Request Header Fields Too Large", "headers_too_large"
            limit = self.cfg.limit_request_field_size
            message = (f"the request headers are over gunicorn's limits ({limit:,} bytes a "
                       f"field, {self.cfg.limit_request_fields} fields)")
        else:
            return super().handle_error(req, client, addr, exc)
        self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        body = json.dumps({"error": {"code": code, "message": message, "field": None,
                                     "limit": limit}}).encode()
        head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        try:
            util.write_nonblock(client, head.encode("latin1") + body)
        except Exception:  # noqa: BLE001 - the client may be gone; as gunicorn does
            self.log.debug("Failed to send error message.")
        return None
