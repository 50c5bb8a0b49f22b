"""The clients: :class:`MemoryConsole` (sync) and :class:`AsyncMemoryConsole` (asyncio).

Both have every call of :class:`~memory_console_client._endpoints.Endpoints`; the async
client's return awaitables. Both are context managers that close their httpx client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx

from ._endpoints import Endpoints
from ._http import Call, RetryPolicy, decode, request_args, should_retry
from .errors import MemoryConsoleError, TransportError
from .models import Page

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0  # seconds; a reindex is a job, so no call should take longer


def _base_url(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/api/v1") else url + "/api/v1"


# The header a client names itself in: the server's recall log traces a recall under that
# interface (python, typescript, langgraph), so the log tells which client asked.
CLIENT_HEADER = "X-Memory-Client"


def _headers(token: str, client_name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json",
            "User-Agent": "memory-console-client/0.1", CLIENT_HEADER: client_name}


def _next_cursor(page: Page, seen: set[str]) -> str | None:
    cursor = page.next_cursor
    if cursor is not None and cursor in seen:
        # A server that ignores ``cursor`` would otherwise make this loop forever.
        raise MemoryConsoleError(f"the server returned cursor {cursor!r} twice")
    if cursor is not None:
        seen.add(cursor)
    return cursor


class MemoryConsole(Endpoints):
    """Sync client. ``base_url`` is the server (``http://host:8000``, with or without
    ``/api/v1``); ``token`` a bearer API token; ``retry`` how idempotent calls retry;
    ``http_client`` an httpx.Client of your own (its base URL and headers are left alone;
    you close it); ``client_name`` is sent as ``X-Memory-Client`` on every request (the
    interface the server's recall log traces its recalls under: ``python``, or
    ``langgraph`` for the LangGraph store)."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, http_client: httpx.Client | None = None,
                 client_name: str = "python"):
        self.retry = retry or RetryPolicy()
        self._base = _base_url(base_url)
        self._headers = _headers(token, client_name)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)

    def _run(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            response, exc = None, None
            try:
                response = self._http.request(call.method, self._base + call.path,
                                              headers=self._headers, **request_args(call))
            except httpx.HTTPError as error:
                exc = error
            if not should_retry(call, attempt, self.retry, response, exc):
                break
            time.sleep(self.retry.delay(attempt, response))
            attempt += 1
        if exc is not None:
            raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
        return decode(call, response)

    def paginate(self, list_call: Callable[..., Page[T]], /, **params: Any) -> Iterator[T]:
        """Every item of a list, page after page: ``for m in client.paginate(
        client.list_memories, user_id="alice", limit=100)``. Pages are fetched lazily."""
        seen: set[str] = set()
        cursor = params.pop("cursor", None)
        while True:
            page = list_call(cursor=cursor, **params)
            yield from page.items
            cursor = _next_cursor(page, seen)
            if cursor is None:
                return

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> MemoryConsole:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class AsyncMemoryConsole(Endpoints):
    """Async client: the same calls as :class:`MemoryConsole`, each returning an awaitable
    (``await client.recall(...)``); ``paginate`` is an async iterator."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None,
                 http_client: httpx.AsyncClient | None = None, client_name: str = "python"):
        self.retry = retry or RetryPolicy()
        self._base = _base_url(base_url)
        self._headers = _headers(token, client_name)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)

    async def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            response, exc = None, None
            try:
                response = await self._http.request(call.method, self._base + call.path,
                                                    headers=self._headers, **request_args(call))
            except httpx.HTTPError as error:
                exc = error
            if not should_retry(call, attempt, self.retry, response, exc):
                break
            await asyncio.sleep(self.retry.delay(attempt, response))
            attempt += 1
        if exc is not None:
            raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
        return decode(call, response)

    def _run(self, call: Call[T]) -> Awaitable[T]:  # type: ignore[override]
        return self._send(call)

    async def paginate(self, list_call: Callable[..., Awaitable[Page[T]]], /,
                       **params: Any) -> AsyncIterator[T]:
        """Every item of a list: ``async for m in client.paginate(client.list_memories,
        user_id="alice")``."""
        seen: set[str] = set()
        cursor = params.pop("cursor", None)
        while True:
            page = await list_call(cursor=cursor, **params)
            for item in page.items:
                yield item
            cursor = _next_cursor(page, seen)
            if cursor is None:
                return

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryConsole:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
