"""Python client for the Memory Console API (sync and async) and, with the ``[langgraph]``
extra, a LangGraph ``BaseStore`` backed by it (``memory_console_client.langgraph``)."""

from ._http import RetryPolicy
from ._recall_log_calls import Feedback, RecallTrace, TraceResult
from .client import AsyncMemoryConsole, MemoryConsole
from .errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    MemoryConsoleError,
    NotFound,
    PayloadTooLarge,
    TransportError,
    Unauthorized,
    Unavailable,
)
from .models import (
    Memory,
    Page,
    Proposal,
    RecallHit,
    RecallResult,
)

__all__ = [
    "ApiError", "AsyncMemoryConsole", "BadRequest", "Conflict", "Feedback", "Forbidden",
    "Memory", "MemoryConsole", "MemoryConsoleError", "NotFound", "Page", "PayloadTooLarge",
    "Proposal", "RecallHit", "RecallResult", "RecallTrace", "RetryPolicy", "TraceResult",
    "TransportError", "Unauthorized", "Unavailable",
]
