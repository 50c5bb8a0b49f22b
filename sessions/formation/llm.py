"""The optional language model: an OpenAI-compatible chat-completions API.

``MEMORY_LLM_URL`` is the API's base URL ending in ``/v1`` (OpenAI, Ollama, vLLM, a llama.cpp
server); the product posts to ``{MEMORY_LLM_URL}/chat/completions`` with
``MEMORY_LLM_MODEL`` and, when set, ``Authorization: Bearer MEMORY_LLM_API_KEY``. An empty URL
means no model. ``MEMORY_LLM_TIMEOUT`` (seconds) bounds the whole call, retries included:
one retry after a connection error or a 5xx when time remains.

Every failure is a ``ModelUnavailable`` whose ``reason`` is one of ``off``, ``timeout``,
``error`` (transport, HTTP status, an answer not shaped as the protocol says) or ``invalid``
(the answer's content did not pass the caller's validation); each call is counted in
``/metrics`` by purpose and outcome. Callers fall back to the local method on any of them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import httpx
from django.conf import settings

from integrations.metrics.registry import observe_llm_call
from sessions.formation import prompts

log = logging.getLogger(__name__)
T = TypeVar("T")


class ModelUnavailable(Exception):
    """The model gave no usable answer; ``reason``: off, timeout, error or invalid."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def configured() -> bool:
    return bool(getattr(settings, "MEMORY_LLM_URL", ""))


def chat(messages: list[dict], *, purpose: str, max_tokens: int = 1024,
         validate: Callable[[str], str] | None = None) -> str:
    """The model's plain-text answer (``choices[0].message.content``) to ``messages``
    (``[{"role", "content"}]``), at temperature 0, passed through ``validate`` when given
    (it raises ValueError for an unusable answer: ``invalid``). ``purpose`` (summary,
    extraction) labels the metrics. Raises ModelUnavailable."""

    def ask():
        text = _request(messages, json_answer=False, max_tokens=max_tokens)
        if validate is None:
            return text
        try:
            return validate(text)
        except ValueError as exc:
            raise ModelUnavailable("invalid", str(exc)) from exc

    return _counted(purpose, ask)


def chat_json(messages: list[dict], *, purpose: str, validate: Callable[[object], T],
              max_tokens: int = 2048) -> T:
    """The model's JSON answer (asked for with ``response_format``), passed through
    ``validate``, which raises ValueError, TypeError or KeyError for an answer of the wrong
    shape. Raises ModelUnavailable (``invalid``: unparseable or refused JSON)."""

    def ask():
        text = _request(messages, json_answer=True, max_tokens=max_tokens)
        try:
            return validate(json.loads(_unfenced(text)))
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelUnavailable("invalid", str(exc)) from exc

    return _counted(purpose, ask)


def _counted(purpose: str, call: Callable[[], T]) -> T:
    """Run one model call: its outcome and time in ``/metrics``, a failure logged."""
    started = time.monotonic()
    outcome = "ok"
    try:
        return call()
    except ModelUnavailable as exc:
        outcome = exc.reason
        log.warning("language model call (%s, prompts %s) failed: %s", purpose,
                    prompts.VERSION, exc)
        raise
    finally:
        observe_llm_call(purpose=purpose, outcome=outcome, seconds=time.monotonic() - started)


def _request(messages: list[dict], *, json_answer: bool, max_tokens: int) -> str:
    if not configured():
        raise ModelUnavailable("off")
    timeout = float(settings.MEMORY_LLM_TIMEOUT)
    deadline = time.monotonic() + timeout
    body = {"model": settings.MEMORY_LLM_MODEL, "messages": messages, "temperature": 0,
            "max_tokens": max_tokens}
    if json_answer:
        body["response_format"] = {"type": "json_object"}
    headers = {"Content-Type": "application/json"}
    if settings.MEMORY_LLM_API_KEY:
        headers["Authorization"] = f"Bearer {settings.MEMORY_LLM_API_KEY}"
    url = settings.MEMORY_LLM_URL.rstrip("/") + "/chat/completions"
    for attempt in (1, 2):
        left = deadline - time.monotonic()
        if left <= 0:
            raise ModelUnavailable("timeout", f"no answer within {timeout:g} s")
        try:
            # The whole exchange, not each read, within what is left of the deadline.
            with httpx.Client(timeout=left) as client:
                status, raw = _within(client, url, body, headers, deadline)
        except httpx.TimeoutException as exc:
            raise ModelUnavailable("timeout", f"no answer within {timeout:g} s") from exc
        except httpx.HTTPError as exc:
            if attempt == 1:
                continue
            raise ModelUnavailable("error", type(exc).__name__) from exc
        if status >= 500 and attempt == 1:
            continue
        if status != 200:
            raise ModelUnavailable("error", f"HTTP {status}")
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelUnavailable("error", "not a chat completion") from exc
        if not isinstance(content, str):
            raise ModelUnavailable("error", "no text in the answer")
        return content
    raise ModelUnavailable("error", "no answer")


def _within(client: httpx.Client, url: str, body: dict, headers: dict,
            deadline: float) -> tuple[int, bytes]:
    """POST and read the answer, ``(status, body)``, giving up at ``deadline`` (a server that
    trickles its answer would stay under a per-read timeout for ever)."""
    with client.stream("POST", url, json=body, headers=headers) as response:
        chunks = []
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("the answer took longer than the deadline")
        return response.status_code, b"".join(chunks)


def _unfenced(text: str) -> str:
    """A JSON answer without the Markdown code fence some models wrap it in."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
