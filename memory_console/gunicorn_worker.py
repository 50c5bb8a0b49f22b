"""The web process's gunicorn worker (``worker_class`` in ``gunicorn_conf``): gthread, whose
refusals of a request line or headers over gunicorn's limits answer in the API's JSON error
shape (``{"error": {"code", "message", "field", "limit"}}``) instead of gunicorn's HTML page.

gunicorn refuses such a request before any of the application runs, so the API's own error
handling (``memory_console.middleware.ApiJsonErrorsMiddleware``) never sees it, and the path
is unknown (the line was not read whole): every such refusal is JSON, pages' too. Other
errors keep gunicorn's handling.
"""

import json

from gunicorn import util
from gunicorn.http.errors import LimitRequestHeaders, LimitRequestLine
from gunicorn.workers import gthread

# gunicorn's own largest request line, and the value ``gunicorn_conf`` sets: everything the
# API takes in a query string fits (ids of 128 characters, a judgment's query of 1000 ASCII
# characters percent-encoded), and nginx's default large_client_header_buffers is 8 kB.
REQUEST_LINE_MAX = 8190


class ThreadWorker(gthread.ThreadWorker):
    def handle_error(self, req, client, addr, exc):
        if isinstance(exc, LimitRequestLine):
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
