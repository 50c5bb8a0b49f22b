"""Request latency by view: ``memory_console_http_request_duration_seconds``.

The view label is the URL pattern that matched (``api/v1/memories/<memory_id>``), never the
path itself, so ids do not multiply the series; a request no pattern matched is
``unmatched``. Methods outside the HTTP vocabulary count as ``other``.
"""

import time

from integrations.metrics.registry import REQUEST_SECONDS

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        start = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.route or match.view_name) if match else "unmatched"
        method = request.method if request.method in METHODS else "other"
        REQUEST_SECONDS.labels(view=view, method=method,
                               status=str(response.status_code)).observe(
            time.perf_counter() - start)
        return response
