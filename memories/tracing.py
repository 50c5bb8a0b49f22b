"""Spans of memory operations, after the OpenTelemetry GenAI memory conventions
(``gen_ai.memory.client``: span name = ``gen_ai.operation.name``).

Recall (``search.memory_search.memory_search``) is ``search_memory``; the writers of
``memories.services`` are ``create_memory``, ``update_memory`` and ``delete_memory``. Every
interface (REST, MCP, the console, the clients and the LangGraph store through REST) goes
through those functions, so each gets the same spans. Attributes:

- ``gen_ai.memory.store.id``: the namespace (``user_id``);
- ``gen_ai.memory.record.id``: the memory's id, on an operation on one memory;
- ``gen_ai.memory.record.count``: results answered (recall), memories written (writes);
- ``gen_ai.memory.query.text``: the query, only when ``MEMORY_TRACE_QUERY_TEXT`` is on;
- ``error.type``: the exception's class name when the operation raised.

Spans are INTERNAL: the memory system runs in this process. Tracing is off until
``integrations.tracing`` calls :func:`enable` (an exporter is configured); until then every
decorated function is called straight through and :func:`traced` returns its function
unchanged.

Imports nothing of Django or Redis: the lowest layers may use it.
"""

import contextlib
import functools
from collections.abc import Callable, Iterator

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

OPERATION = "gen_ai.operation.name"
STORE_ID = "gen_ai.memory.store.id"
RECORD_ID = "gen_ai.memory.record.id"
RECORD_COUNT = "gen_ai.memory.record.count"
QUERY_TEXT = "gen_ai.memory.query.text"
ERROR_TYPE = "error.type"
DEDUPLICATED = "memory_console.deduplicated"

_tracer: trace.Tracer | None = None
_query_text = False


def enable(provider: trace.TracerProvider, *, query_text: bool = False) -> None:
    """Emit spans through ``provider``; ``query_text``: record the recall query."""
    global _tracer, _query_text
    _tracer = provider.get_tracer("memory_console")
    _query_text = query_text


def disable() -> None:
    global _tracer
    _tracer = None


def enabled() -> bool:
    return _tracer is not None


@contextlib.contextmanager
def span(name: str, attributes: dict | None = None) -> Iterator[Span]:
    """A span ``name``, child of the current one, the current one inside the block. An
    exception leaving the block is recorded, sets the ERROR status and ``error.type``, and
    is raised again. Only when :func:`enabled`."""
    assert _tracer is not None
    with _tracer.start_as_current_span(name, kind=SpanKind.INTERNAL,
                                       attributes=attributes) as current:
        try:
            yield current
        except Exception as exc:
            current.set_attribute(ERROR_TYPE, type(exc).__qualname__)
            raise


def traced(name: str, fn: Callable) -> Callable:
    """``fn`` run in a span ``name`` (a step of an operation: the index, the database
    check); ``fn`` itself when tracing is off."""
    if _tracer is None:
        return fn

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with span(name):
            return fn(*args, **kwargs)

    return run


def carried(name: str, fn: Callable) -> Callable:
    """``fn`` for another thread: run there in a span ``name``, child of the span current
    here (a thread starts with no context of its own); ``fn`` itself when tracing is off."""
    if _tracer is None:
        return fn
    here = otel_context.get_current()

    @functools.wraps(fn)
    def run(*args, **kwargs):
        token = otel_context.attach(here)
        try:
            with span(name):
                return fn(*args, **kwargs)
        finally:
            otel_context.detach(token)

    return run


def recall_span(fn: Callable) -> Callable:
    """Decorates ``memory_search(*, user_id, query, ...)``: a ``search_memory`` span whose
    record count is the number of results answered."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if _tracer is None:
            return fn(*args, **kwargs)
        attributes = {OPERATION: "search_memory", STORE_ID: kwargs.get("user_id", "")}
        if _query_text:
            attributes[QUERY_TEXT] = kwargs.get("query", "")
        with span("search_memory", attributes) as current:
            found = fn(*args, **kwargs)
            current.set_attribute(RECORD_COUNT, len(found.results))
            return found

    return run


def write_span(operation: str) -> Callable[[Callable], Callable]:
    """Decorates a writer of one memory (``memory_id=`` or the fields of a new one) or of a
    list (``items=``): a span ``operation`` (``create_memory``, ``update_memory``,
    ``delete_memory``). The store and record ids come from the arguments and from what the
    writer returns (a memory, ``(memory, deduplicated)``, or anything with ``memory_id`` and
    ``user_id``)."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if _tracer is None:
                return fn(*args, **kwargs)
            with span(operation, _write_attributes(operation, kwargs)) as current:
                out = fn(*args, **kwargs)
                if "items" not in kwargs:
                    _describe(current, out)
                return out

        return run

    return decorate


def _write_attributes(operation: str, kwargs: dict) -> dict:
    items = kwargs.get("items")
    if items is not None:
        stores = {item.get("user_id") for item in items if isinstance(item, dict)}
        attributes = {OPERATION: operation, RECORD_COUNT: len(items)}
        if len(stores) == 1 and None not in stores:
            attributes[STORE_ID] = str(stores.pop())
        return attributes
    attributes = {OPERATION: operation, RECORD_COUNT: 1}
    if kwargs.get("memory_id"):
        attributes[RECORD_ID] = str(kwargs["memory_id"])
    if kwargs.get("user_id"):
        attributes[STORE_ID] = str(kwargs["user_id"])
    return attributes


def _describe(current: Span, out) -> None:
    record = out
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], bool):
        record = out[0]
        current.set_attribute(DEDUPLICATED, out[1])
    memory_id, user_id = getattr(record, "memory_id", None), getattr(record, "user_id", None)
    if memory_id:
        current.set_attribute(RECORD_ID, str(memory_id))
    if user_id:
        current.set_attribute(STORE_ID, str(user_id))
