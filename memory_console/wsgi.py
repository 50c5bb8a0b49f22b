"""The WSGI application (gunicorn: loaded in each worker, after the fork; runserver).

Tracing is set up here (``integrations.tracing.setup``: off unless ``OTEL_TRACES_EXPORTER``
names an exporter), once per process, between Django's set-up and the handler's loading of
its middleware: Django's instrumentation adds a middleware, and its exporter's thread must
start in the worker, not in a process that forks it.
"""

import os

import django
from django.core.handlers.wsgi import WSGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
django.setup(set_prefix=False)  # what get_wsgi_application() does, tracing in between

from integrations.tracing.setup import setup  # noqa: E402 - needs the settings

setup()
application = WSGIHandler()
