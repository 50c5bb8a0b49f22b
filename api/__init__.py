"""JSON API under /api/v1/ (django-ninja; OpenAPI at /api/v1/openapi.json, docs at /api/v1/docs).

One NinjaAPI object (``api.core``), one router per capability (``api.memories``,
``api.search``, ``api.sessions``, ``api.operations``, ``api.audit``, and the lab's
``lab.api``), mounted by ``api.v1``. Thin: parse and check the request shape, call a service
or selector, shape the reply. Errors are ``{"error": {"code", "message", "field"}}`` with
400/401/403/404/409/413.
"""
