"""Every Prometheus metric of Memory Console, named in one place (prometheus-client).

Labels are bounded on purpose: views are URL patterns, profiles are ranking-profile names,
kinds and outcomes are fixed vocabularies. No label ever carries a namespace (``user_id``),
a memory id or free text: there may be 10,000 namespaces.

Under gunicorn and the RQ worker the values live in prometheus-client's multiprocess files
(``PROMETHEUS_MULTIPROC_DIR``, set by the gunicorn config and ``scripts/run``); ``/metrics``
merges every process's files (``integrations.metrics.exposition``). Without that variable
(runserver, tests, management commands) they are ordinary in-process values.

Use the helpers below rather than the objects where one exists: they keep label values in
their vocabulary.
"""

from prometheus_client import Counter, Gauge, Histogram

NAMESPACE = "memory_console"

# Seconds: 1 ms .. 10 s, dense where recall and API calls live.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
JOB_BUCKETS = (0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
RESULT_BUCKETS = (0, 1, 2, 3, 5, 10, 20, 50, 100)

REQUEST_SECONDS = Histogram(
    "http_request_duration_seconds", "Time to answer an HTTP request, by view (URL pattern).",
    ["view", "method", "status"], namespace=NAMESPACE, buckets=LATENCY_BUCKETS)

RECALL_SECONDS = Histogram(
    "recall_duration_seconds", "Time of one recall (search) in the engine, by ranking profile.",
    ["profile"], namespace=NAMESPACE, buckets=LATENCY_BUCKETS)

RECALL_RESULTS = Histogram(
    "recall_results", "Results returned by one recall, by ranking profile.",
    ["profile"], namespace=NAMESPACE, buckets=RESULT_BUCKETS)

MEMORY_WRITES = Counter(
    "memory_writes", "Committed memory changes, by kind (create, edit, forget, purge ...).",
    ["kind"], namespace=NAMESPACE)

REDIS_ERRORS = Counter(
    "redis_errors", "Redis errors met while serving, by where they were met.",
    ["where"], namespace=NAMESPACE)

# Where Redis errors are counted. Each series exists at 0 from the start, so a rate or an
# alert on it has a series to read before the first error (an absent series is no data).
REDIS_ERROR_PLACES = ("api", "mirror", "recall_hits", "mcp", "metrics")
for _where in REDIS_ERROR_PLACES:
    REDIS_ERRORS.labels(where=_where)

JOB_SECONDS = Histogram(
    "job_duration_seconds", "Wall time of one background job, by job and outcome.",
    ["job", "status"], namespace=NAMESPACE, buckets=JOB_BUCKETS)

# The most recent reconcile's findings; "mostrecent": the value of whichever process set
# it last, also after that process ended.
INDEX_DRIFT = Gauge(
    "index_drift", "Memories whose Redis state differed from the database at the last "
    "reconcile (found), and after its repair (after_repair).",
    ["when"], namespace=NAMESPACE, multiprocess_mode="mostrecent")

WEBHOOK_DELIVERIES = Counter(
    "webhook_deliveries", "Webhook delivery attempts, by event and outcome "
    "(delivered, failed: a retry is due, gave_up: no retry left).",
    ["event", "outcome"], namespace=NAMESPACE)

WEBHOOK_SECONDS = Histogram(
    "webhook_delivery_duration_seconds", "Time of one webhook delivery attempt, by outcome.",
    ["outcome"], namespace=NAMESPACE, buckets=LATENCY_BUCKETS)

WEBHOOK_OUTCOMES = ("delivered", "failed", "gave_up")


def observe_recall(*, profile: str, took_ms: float, results: int) -> None:
    """One recall: its engine time in milliseconds and how many results it returned."""
    RECALL_SECONDS.labels(profile=profile).observe(took_ms / 1000.0)
    RECALL_RESULTS.labels(profile=profile).observe(results)


def count_write(kind: str, n: int = 1) -> None:
    """``n`` committed memory changes of ``kind`` (a ``ChangeKind`` value)."""
    MEMORY_WRITES.labels(kind=kind).inc(n)


LLM_PURPOSES = ("summary", "extraction")
LLM_OUTCOMES = ("ok", "off", "timeout", "error", "invalid")

LLM_CALLS = Histogram(
    "llm_call_duration_seconds", "Time of one language model call (sessions.formation.llm), "
    "by purpose (summary, extraction) and outcome (ok, off, timeout, error, invalid); its "
    "count is the number of calls.",
    ["purpose", "outcome"], namespace=NAMESPACE, buckets=LATENCY_BUCKETS)


def observe_llm_call(*, purpose: str, outcome: str, seconds: float) -> None:
    """One language model call; a caller that then uses its local method counts it as a
    fallback by the outcome (anything but ``ok``). Raises ValueError for a label outside its
    vocabulary."""
    if purpose not in LLM_PURPOSES or outcome not in LLM_OUTCOMES:
        raise ValueError(f"purpose {purpose!r} / outcome {outcome!r} unknown")
    LLM_CALLS.labels(purpose=purpose, outcome=outcome).observe(seconds)


RECALL_LOG = Counter(
    "recall_log_traces", "Recall traces, by outcome: buffered (in Redis), written (to the "
    "database), dropped (the buffer was full), failed (Redis refused the trace: the recall "
    "stood, untraced).", ["outcome"], namespace=NAMESPACE)

RECALL_LOG_OUTCOMES = ("buffered", "written", "dropped", "failed")
for _outcome in RECALL_LOG_OUTCOMES:
    RECALL_LOG.labels(outcome=_outcome)


def count_recall_log(outcome: str, n: int = 1) -> None:
    """``n`` recall traces of ``outcome`` (one of ``RECALL_LOG_OUTCOMES``)."""
    RECALL_LOG.labels(outcome=outcome).inc(n)


def count_redis_error(where: str) -> None:
    """A Redis error at ``where`` (a short fixed name: ``api``, ``mirror``, ``recall_hits``)."""
    REDIS_ERRORS.labels(where=where).inc()


def count_webhook_delivery(*, event: str, outcome: str, seconds: float | None = None) -> None:
    """One delivery attempt of a webhook ``event`` (``memory.created`` ...): ``outcome`` is
    ``delivered`` (2xx), ``failed`` (a retry is due) or ``gave_up`` (no retry left);
    ``seconds`` the attempt's duration when known. Raises ValueError for another outcome."""
    if outcome not in WEBHOOK_OUTCOMES:
        raise ValueError(f"outcome must be one of {WEBHOOK_OUTCOMES}, not {outcome!r}")
    WEBHOOK_DELIVERIES.labels(event=event, outcome=outcome).inc()
    if seconds is not None:
        WEBHOOK_SECONDS.labels(outcome=outcome).observe(seconds)


MCP_TOOL_CALLS = Counter(
    "mcp_tool_calls", "MCP tool calls, by tool (an unknown tool's name counts as unknown).",
    ["tool"], namespace=NAMESPACE)

MCP_TOOL_ERRORS = Counter(
    "mcp_tool_errors", "MCP tool calls answered with an error, by tool and error code "
    "(invalid, forbidden, not_found, conflict, unavailable ...; internal: an unexpected "
    "failure).", ["tool", "code"], namespace=NAMESPACE)

MCP_TOOL_SECONDS = Histogram(
    "mcp_tool_duration_seconds", "Time of one MCP tool call, by tool.",
    ["tool"], namespace=NAMESPACE, buckets=LATENCY_BUCKETS)


def mcp_tools_known(names) -> None:
    """Create the call series of every tool in ``names`` at 0 (a tool never called still
    shows, with 0 calls)."""
    for name in names:
        MCP_TOOL_CALLS.labels(tool=name)


def observe_mcp_tool(*, tool: str, seconds: float, error_code: str | None) -> None:
    """One MCP tool call of ``tool`` (a registered tool's name, or ``unknown``) that took
    ``seconds``; ``error_code`` is its error's code (``invalid`` ...) or None when it
    succeeded."""
    MCP_TOOL_CALLS.labels(tool=tool).inc()
    MCP_TOOL_SECONDS.labels(tool=tool).observe(seconds)
    if error_code is not None:
        MCP_TOOL_ERRORS.labels(tool=tool, code=error_code).inc()
