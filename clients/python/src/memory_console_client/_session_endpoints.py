"""The session calls: a conversation's window, its summary and what it promotes or extracts
(mixed into :class:`~memory_console_client._endpoints.Endpoints`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import models as m
from ._answers import _none, _one, _page
from ._http import Call, compact, seg


class SessionEndpoints:
    """Calls on /sessions (see the README for what each does)."""

    def _run(self, call: Call) -> Any:  # pragma: no cover - provided by the clients
        raise NotImplementedError

    # sessions ---------------------------------------------------------------------------
    def create_session(self, user_id: str, *, session_id: str | None = None,
                       agent_id: str | None = None, ttl_seconds: int | None = None,
                       system_prompt: str | None = None,
                       metadata: Mapping[str, Any] | None = None) -> m.Session:
        body = compact(dict(user_id=user_id, session_id=session_id, agent_id=agent_id,
                            ttl_seconds=ttl_seconds, system_prompt=system_prompt,
                            metadata=dict(metadata) if metadata is not None else None))
        return self._run(Call("POST", "/sessions", _one(m.Session), json=body))

    def get_session(self, session_id: str) -> m.Session:
        return self._run(Call("GET", f"/sessions/{seg(session_id)}", _one(m.Session),
                              idempotent=True))

    def list_sessions(self, user_id: str, *, cursor: str | None = None,
                      limit: int | None = None) -> m.Page[m.SessionListing]:
        return self._run(Call("GET", "/sessions", _page("sessions", m.SessionListing),
                              params={"user_id": user_id, "cursor": cursor, "limit": limit},
                              idempotent=True))

    def delete_session(self, session_id: str) -> None:
        return self._run(Call("DELETE", f"/sessions/{seg(session_id)}", _none,
                              idempotent=True))

    def append(self, session_id: str, messages: list[Mapping[str, str]]) -> m.Appended:
        """``POST /sessions/{id}/messages`` with ``[{"role", "content"}, ...]``; answers the
        window's length. Never retried (a retry would append twice)."""
        return self._run(Call("POST", f"/sessions/{seg(session_id)}/messages",
                              _one(m.Appended), json={"messages": [dict(x) for x in messages]}))

    def context(self, session_id: str, *, last: int | None = None,
                max_tokens: int | None = None, at: str | None = None) -> m.Context:
        """The summary and the newest ``last`` (1..1000) messages; ``at`` (ISO 8601) for
        the context as it was then."""
        return self._run(Call("GET", f"/sessions/{seg(session_id)}/context", _one(m.Context),
                              params={"last": last, "max_tokens": max_tokens, "at": at},
                              idempotent=True))

    def summarise(self, session_id: str, max_chars: int | None = None) -> m.Summary:
        """The summary of the whole session now, at most ``max_chars`` (100..20000, default
        2000) characters; read-only (the session is not changed)."""
        return self._run(Call("POST", f"/sessions/{seg(session_id)}/summarise",
                              _one(m.Summary), json=compact({"max_chars": max_chars}),
                              idempotent=True))

    def promote_message(self, session_id: str, seq: int, *, reason: str | None = None,
                        content: str | None = None, type: m.MemoryType | None = None,
                        importance: float | None = None) -> m.Memory:
        """A session message as a user-wide memory; ``content``, ``type`` and ``importance``
        edit it before it is written."""
        return self._run(Call("POST", f"/sessions/{seg(session_id)}/messages/{int(seq)}/promote",
                              _one(m.Memory), json=compact({
                                  "reason": reason, "content": content, "type": type,
                                  "importance": importance})))

    def extract(self, session_id: str, dry_run: bool = True) -> m.Extraction:
        """``POST /sessions/{id}/extract``: the memories worth keeping from the session's
        messages (``candidates``, each with the ``seqs`` it comes from); ``dry_run=False``
        writes them (editor) and answers their ``memory_ids``. Retried only as a dry run."""
        return self._run(Call("POST", f"/sessions/{seg(session_id)}/extract",
                              _one(m.Extraction), json={"dry_run": dry_run},
                              idempotent=dry_run))
