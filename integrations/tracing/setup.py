"""Tracing of a process, from the standard ``OTEL_*`` variables; off unless an exporter is named.

``OTEL_TRACES_EXPORTER`` names the exporters, comma-separated: ``console`` (spans as JSON on
stderr: stdout is the MCP channel of ``mcp_stdio``), ``otlp`` (OTLP over HTTP/protobuf to
``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, which the exporter
reads itself with the headers, timeout and compression variables), or any other exporter an
installed package registers (entry point group ``opentelemetry_traces_exporter``). Unset,
empty or ``none``, and with ``OTEL_SDK_DISABLED=true``, nothing is set up: no provider, no
instrumentation, and the memory operations call straight through (``memories.tracing``).
The SDK reads the rest itself: ``OTEL_SERVICE_NAME`` (default ``memory-console`` here),
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER`` / ``_ARG``, ``OTEL_BSP_*``,
``OTEL_PROPAGATORS`` (an incoming ``traceparent`` continues the caller's trace).

Once set up, Django's requests, Redis commands (arguments replaced by ``?``) and psycopg's
queries (SQL text with placeholders, never the parameters) get spans of their standard
instrumentations, children of which are the memory operations' spans. A request's query
string can hold a search's text (``?q=``): its values are kept off the request's span
(``name=REDACTED``) unless ``MEMORY_TRACE_QUERY_TEXT`` is on.

Called once per process where it starts serving: ``memory_console.wsgi`` (each gunicorn
worker, after the fork, and runserver), the job worker's class
(``integrations.tracing.worker``) and ``manage.py mcp_stdio``.
"""

import os
import sys
from importlib.metadata import entry_points
from urllib.parse import parse_qsl

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from memories import tracing

_provider: TracerProvider | None = None


def exporter_names(environ=os.environ) -> list[str]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (``[]``: tracing is off)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",")]
    return [n for n in names if n and n != "none"]


def setup() -> bool:
    """Set tracing up for this process (once: later calls change nothing); whether it is on.
    Raises ImproperlyConfigured for an exporter that is not installed."""
    global _provider
    if _provider is not None:
        return True
    names = exporter_names()
    if not names:
        return False
    provider = TracerProvider(resource=Resource.create(
        {SERVICE_NAME: os.environ.get("OTEL_SERVICE_NAME") or "memory-console"}))
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    trace.set_tracer_provider(provider)
    instrument(provider)
    _provider = provider
    return True


def instrument(provider: TracerProvider) -> None:
    """Spans through ``provider`` for Django, Redis, psycopg and the memory operations.
    Django's must come before the WSGI handler loads its middleware (it adds one)."""
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    query_text = settings.MEMORY_TRACE_QUERY_TEXT
    DjangoInstrumentor().instrument(tracer_provider=provider,
                                    request_hook=None if query_text else _redact_query)
    RedisInstrumentor().instrument(tracer_provider=provider)
    PsycopgInstrumentor().instrument(tracer_provider=provider)
    tracing.enable(provider, query_text=query_text)


def uninstrument() -> None:
    """Undo :func:`instrument` (tests)."""
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    tracing.disable()
    DjangoInstrumentor().uninstrument()
    RedisInstrumentor().uninstrument()
    PsycopgInstrumentor().uninstrument()


def flush() -> None:
    """Export the spans held in batches now (a process about to leave through ``os._exit``,
    such as an RQ work horse, never runs the SDK's exit hook)."""
    if _provider is not None:
        _provider.force_flush()


# The request span's attributes that carry the query string (old and new HTTP conventions).
_WITH_QUERY = ("http.target", "http.url", "url.full", "url.query")


def _redact_query(span, request) -> None:
    """Django's request hook: each value of the query string replaced by ``REDACTED`` in the
    span's attributes that carry it."""
    raw = request.META.get("QUERY_STRING", "")
    if not raw or not span.is_recording():
        return
    redacted = "&".join(f"{name}=REDACTED" for name, _ in parse_qsl(raw, keep_blank_values=True))
    for key in _WITH_QUERY:
        value = span.attributes.get(key)
        if isinstance(value, str) and raw in value:
            span.set_attribute(key, value.replace(raw, redacted))


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter(out=sys.stderr)
    if name in ("otlp", "otlp_proto_http"):
        protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                    or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")
        if protocol != "http/protobuf":
            raise ImproperlyConfigured(
                f"OTEL_EXPORTER_OTLP_PROTOCOL {protocol!r}: only http/protobuf is installed")
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    found = entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        raise ImproperlyConfigured(f"OTEL_TRACES_EXPORTER names {name!r}, which no installed "
                                   "package provides (console, otlp)")
    return next(iter(found)).load()()
