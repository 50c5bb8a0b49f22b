"""What a call is, when it is retried and how a response becomes a value or an exception.

Shared by the sync and the async client, which differ only in how they send and sleep.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from .errors import error_for

T = TypeVar("T")

# Statuses worth another try: the server said "not now" (Redis unreachable behind it).
RETRY_STATUSES = frozenset({503})


def seg(value: str) -> str:
    """One path segment: ids may hold any character (``foo:bar``, ``a/b``, Chinese)."""
    return quote(str(value), safe="")


def iso(value: datetime | str | None) -> str | None:
    """A moment as the API takes it: ISO 8601 text (a datetime is formatted; a naive one is
    read as UTC by the server), None left as None."""
    return value.isoformat() if isinstance(value, datetime) else value


def compact(values: dict[str, Any]) -> dict[str, Any]:
    """The fields that were given (None = leave the server's default)."""
    return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call: ``parse`` turns the decoded JSON body (None for 204) into the result.
    ``idempotent`` calls (reads, DELETE, read-only POSTs such as recall) are retried on 503
    and on connection errors; creates and other changes never are, so a lost answer cannot
    write twice."""

    method: str
    path: str
    parse: Callable[[Any], T]
    json: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    idempotent: bool = False


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries in all (1 = no retry). The n-th retry waits a random time in
    [0, min(max_backoff, backoff * 2**n)] seconds ("full jitter", AWS Architecture Blog,
    "Exponential Backoff and Jitter", 2015), or the server's ``Retry-After`` seconds when it
    sends one (capped at ``max_backoff``)."""

    attempts: int = 4
    backoff: float = 0.25
    max_backoff: float = 8.0

    def delay(self, retry: int, response: httpx.Response | None) -> float:
        after = response.headers.get("Retry-After") if response is not None else None
        if after is not None:
            try:
                return min(self.max_backoff, max(0.0, float(after)))
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        return random.uniform(0, min(self.max_backoff, self.backoff * 2 ** retry))


def should_retry(call: Call, attempt: int, policy: RetryPolicy,
                 response: httpx.Response | None, exc: Exception | None) -> bool:
    """Whether try number ``attempt`` (0-based) of ``call`` gets another one."""
    if not call.idempotent or attempt + 1 >= policy.attempts:
        return False
    if exc is not None:
        return isinstance(exc, httpx.TransportError)
    return response is not None and response.status_code in RETRY_STATUSES


def request_args(call: Call) -> dict[str, Any]:
    args: dict[str, Any] = {"params": compact(call.params)}
    if call.json is not None:
        args["json"] = call.json
    return args


def decode(call: Call[T], response: httpx.Response) -> T:
    """The parsed result, or the :class:`~memory_console_client.errors.ApiError` subclass
    for the status (raised)."""
    if response.status_code == 204 or not response.content:
        body: Any = None
    else:
        try:
            body = response.json()
        except ValueError:
            body = response.text
    if response.status_code >= 400:
        raise error_for(response.status_code, body)
    return call.parse(body)
