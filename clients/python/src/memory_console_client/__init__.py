"""Python client for the Memory Console API (sync and async) and, with the ``[langgraph]``
extra, a LangGraph ``BaseStore`` backed by it (``memory_console_client.langgraph``)."""

from ._http import RetryPolicy
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
    "ApiError", "AsyncMemoryConsole", "BadRequest", "Conflict", "Forbidden", "Memory",
    "MemoryConsole", "MemoryConsoleError", "NotFound", "Page", "PayloadTooLarge", "Proposal",
    "RecallHit", "RecallResult", "RetryPolicy", "TransportError", "Unauthorized", "Unavailable",
]
