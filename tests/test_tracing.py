"""Traces: recall and memory writes through the REST API give GenAI memory spans
(``memories.tracing``) under Django's request span, with the index, database check and encoder
as children; the query text only when opted in; nothing set up without an exporter
(``integrations.tracing.setup``); log lines inside a span carry its trace id."""

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from integrations.tracing import setup as tracing_setup
from integrations.tracing.logs import TraceIdFilter
from memories import services, tracing
from memories.errors import NotFound
from search import embeddings
from search.models import RankingProfile
from tests.helpers import create, recall

# Writes mirror to Redis after commit; the PostgreSQL pass also checks psycopg's spans.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

ROOT = Path(__file__).resolve().parent.parent


def _traced():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # psycopg's instrumentation traces the connections opened after it, as in a process that
    # sets tracing up before its first query (SQLite's in-memory test database stays open).
    connection.close()
    tracing_setup.instrument(provider)
    try:
        yield exporter
    finally:
        tracing_setup.uninstrument()
        connection.close()


@pytest.fixture
def spans(settings):
    """The spans of this test, tracing set up as with an exporter (query text off)."""
    settings.MEMORY_TRACE_QUERY_TEXT = False
    yield from _traced()


@pytest.fixture
def spans_with_query_text(settings):
    settings.MEMORY_TRACE_QUERY_TEXT = True
    yield from _traced()


def _one(exporter, name):
    found = [s for s in exporter.get_finished_spans() if s.name == name]
    assert len(found) == 1, [s.name for s in exporter.get_finished_spans()]
    return found[0]


def _descendants(exporter, root) -> list:
    every = exporter.get_finished_spans()
    out, parents = [], {root.context.span_id}
    for _ in range(len(every)):
        more = [s for s in every if s.parent is not None and s.parent.span_id in parents
                and s not in out]
        if not more:
            break
        out += more
        parents |= {s.context.span_id for s in more}
    return out


def _parent(exporter, span):
    return next(s for s in exporter.get_finished_spans()
                if span.parent is not None and s.context.span_id == span.parent.span_id)


def test_a_rest_recall_gives_a_search_memory_span_with_its_steps(spans, api):
    RankingProfile.objects.create(name="sem", stemming=True, context=True, w_semantic=0.6)
    kept = create("Alice drinks green tea every morning")
    create("the boat needs new sails")
    embeddings.embed_pending()  # rescoring then waits for the query's vector
    embeddings.clear_query_cache()  # encoded here, not taken from an earlier test's recall
    spans.clear()

    hits = recall(api, "green tea", profile="sem")

    assert [h["memory_id"] for h in hits] == [kept.memory_id]
    search = _one(spans, "search_memory")
    assert search.kind == SpanKind.INTERNAL
    assert dict(search.attributes) == {"gen_ai.operation.name": "search_memory",
                                       "gen_ai.memory.store.id": "u-a",
                                       "gen_ai.memory.record.count": 1}
    request = _parent(spans, search)
    assert request.kind == SpanKind.SERVER  # Django's span of POST /api/v1/recall
    assert request.attributes.get("http.method") == "POST"
    below = _descendants(spans, search)
    names = {s.name for s in below}
    assert {"memory.index", "memory.db_check", "memory.encode"} <= names
    index = next(s for s in below if s.name == "memory.index")
    assert any(s.attributes.get("db.system") == "redis" for s in _descendants(spans, index))
    encode = next(s for s in below if s.name == "memory.encode")
    assert encode.parent.span_id == search.context.span_id  # from the encoding thread
    if connection.vendor == "postgresql":
        check = next(s for s in below if s.name == "memory.db_check")
        sql = [s for s in _descendants(spans, check) if s.attributes.get("db.system") == "postgresql"]
        assert sql and all("green" not in s.attributes.get("db.statement", "") for s in sql)
    every = spans.get_finished_spans()
    assert all("green tea" not in str(dict(s.attributes)) for s in every)


def test_a_query_string_keeps_its_values_off_the_request_span(spans, api):
    assert api.get("/memories?user_id=u-a&q=oolong").status_code == 200
    (request,) = [s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER]
    # http.target under gunicorn (RAW_URI), http.url under the test client
    url = request.attributes.get("http.target") or request.attributes["http.url"]
    assert url.endswith("/api/v1/memories?user_id=REDACTED&q=REDACTED")
    assert "oolong" not in str(dict(request.attributes))


def test_the_query_text_is_recorded_only_when_opted_in(spans_with_query_text, api):
    create("Alice drinks green tea every morning")
    recall(api, "green tea")
    search = _one(spans_with_query_text, "search_memory")
    assert search.attributes["gen_ai.memory.query.text"] == "green tea"
    api.get("/memories?user_id=u-a&q=oolong")
    request = next(s for s in spans_with_query_text.get_finished_spans()
                   if s.kind == SpanKind.SERVER and s.attributes.get("http.method") == "GET")
    url = request.attributes.get("http.target") or request.attributes["http.url"]
    assert url.endswith("/api/v1/memories?user_id=u-a&q=oolong")


def test_rest_writes_give_create_update_and_delete_memory_spans(spans, api):
    resp = api.post("/memories", {"user_id": "u-w", "content": "Bob moved to Lisbon"})
    assert resp.status_code == 201, resp.content
    memory_id = resp.json()["memory_id"]
    assert api.patch(f"/memories/{memory_id}", {"importance": 0.9}).status_code == 200
    assert api.delete(f"/memories/{memory_id}").status_code == 204

    for name in ("create_memory", "update_memory", "delete_memory"):
        span = _one(spans, name)
        assert span.attributes["gen_ai.operation.name"] == name
        assert span.attributes["gen_ai.memory.store.id"] == "u-w"
        assert span.attributes["gen_ai.memory.record.id"] == memory_id
        assert span.attributes["gen_ai.memory.record.count"] == 1
        assert _parent(spans, span).kind == SpanKind.SERVER
        assert "Bob" not in str(dict(span.attributes))


def test_a_batch_create_counts_its_records_and_a_failed_write_says_why(spans):
    services.memory_create_many(items=[{"user_id": "u-b", "content": "one"},
                                       {"user_id": "u-b", "content": "two"}])
    batch = _one(spans, "create_memory")
    assert batch.attributes["gen_ai.memory.record.count"] == 2
    assert batch.attributes["gen_ai.memory.store.id"] == "u-b"
    with pytest.raises(NotFound):
        services.memory_update(memory_id="mem_0000000000000000", importance=0.5)
    failed = _one(spans, "update_memory")
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes["error.type"] == "NotFound"


def test_a_log_line_in_a_span_carries_its_trace_id(spans):
    handler = next(h for h in logging.getLogger().handlers
                   if any(isinstance(f, TraceIdFilter) for f in h.filters))
    stream = io.StringIO()
    old = handler.setStream(stream)
    try:
        logging.getLogger("tests.tracing").warning("outside")
        with tracing.span("search_memory") as span:
            logging.getLogger("tests.tracing").warning("inside")
    finally:
        handler.setStream(old)
    context = span.get_span_context()
    assert stream.getvalue().splitlines() == [
        "outside",
        f"inside trace_id={context.trace_id:032x} span_id={context.span_id:016x}"]


def test_the_exporter_names_come_from_the_standard_variables():
    assert tracing_setup.exporter_names({}) == []
    assert tracing_setup.exporter_names({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert tracing_setup.exporter_names({"OTEL_TRACES_EXPORTER": "console, otlp"}) == [
        "console", "otlp"]
    assert tracing_setup.exporter_names({"OTEL_TRACES_EXPORTER": "console",
                                         "OTEL_SDK_DISABLED": "true"}) == []


_PROBE = """
import redis
import memory_console.wsgi
from django.conf import settings
from opentelemetry import trace
from memories import tracing
print(tracing.enabled(), type(trace.get_tracer_provider()).__name__,
      any("opentelemetry" in m for m in settings.MIDDLEWARE),
      hasattr(redis.Redis.execute_command, "__wrapped__"))
with trace.get_tracer("probe").start_as_current_span("probe-span"):
    pass
"""


@pytest.mark.parametrize("exporter, expected", [
    (None, "False ProxyTracerProvider False False"),
    ("console", "True TracerProvider True True"),
])
def test_the_wsgi_process_sets_tracing_up_only_with_an_exporter(exporter, expected):
    """A process loading the WSGI application (a gunicorn worker, runserver): no exporter, no
    provider, no instrumentation; the console exporter writes spans on stderr, not stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["DJANGO_SETTINGS_MODULE"] = "memory_console.settings_test"
    if exporter:
        env["OTEL_TRACES_EXPORTER"] = exporter
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected
    assert ('"name": "probe-span"' in done.stderr) == bool(exporter)
    assert "probe-span" not in done.stdout
