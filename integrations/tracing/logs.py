"""Trace ids on log records: a logging filter (``LOGGING`` in settings puts it on the console
handler) that sets ``record.trace_id`` and ``record.span_id`` (lowercase hex, 32 and 16
characters; ``""`` outside a recorded span) and ``record.trace`` (`` trace_id=… span_id=…``
after the message in the console's format, ``""`` outside a span), so a log line is found
from its trace and the other way round. Outside a span, or with tracing off, the line is
unchanged."""

import logging

from opentelemetry import trace


class TraceIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            record.trace_id = format(context.trace_id, "032x")
            record.span_id = format(context.span_id, "016x")
            record.trace = f" trace_id={record.trace_id} span_id={record.span_id}"
        else:
            record.trace_id = record.span_id = record.trace = ""
        return True
