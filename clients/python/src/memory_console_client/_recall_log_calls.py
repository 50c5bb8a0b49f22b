"""The recall log's calls and answers: the traces of past recalls and the feedback on their
results (mixed into :class:`~memory_console_client._endpoints.Endpoints`).

Every recall answers a ``recall_id`` (``RecallResult.recall_id``); a trace says who asked
what through which interface (this client sends ``X-Memory-Client: python``, the LangGraph
store ``langgraph``) and what was answered, in order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from . import models as m
from ._answers import _one, _page
from ._http import Call, iso, seg


class Feedback(m.Model):
    """One actor's feedback on one result of a recall: ``grade`` 0..3 (``useful`` true was
    3, false 0) and a ``note``; ``actor`` is the token's user. ``recall_id`` names the
    recall even after its trace expired."""

    id: int
    recall_id: str
    memory_id: str
    actor: str
    grade: int
    note: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None


class TraceResult(m.Model):
    """One result of a traced recall: its ``rank`` (1 = first), the memory's ``version``
    that was served, its ``score`` and the explain's figures (no text)."""

    memory_id: str
    version: int
    rank: int
    score: float
    explain: dict[str, Any] = Field(default_factory=dict)


class RecallTrace(m.Model):
    """``GET /recalls/{id}``: one recall as it was answered. ``interface`` is rest, mcp,
    console, python, typescript or langgraph; ``took_ms`` in milliseconds; ``results`` in
    the order the recall answered them; ``feedback`` every actor's."""

    id: str
    at: datetime
    user_id: str
    agent_id: str | None = None
    actor: str
    interface: str
    query: str = ""
    profile: str
    profile_version: int | None = None
    match_mode: str = ""
    filters: dict[str, Any] = Field(default_factory=dict)
    time_range: dict[str, Any] | None = None
    took_ms: float
    results: list[TraceResult] = Field(default_factory=list)
    feedback: list[Feedback] = Field(default_factory=list)


class RecallLogCalls:
    """Calls on /recalls (see the README)."""

    def _run(self, call: Call) -> Any:  # pragma: no cover - provided by the clients
        raise NotImplementedError

    def recalls(self, user_id: str, *, agent_id: str | None = None, actor: str | None = None,
                interface: str | None = None, since: datetime | str | None = None,
                until: datetime | str | None = None, q: str | None = None,
                cursor: str | None = None, limit: int | None = None) -> m.Page[RecallTrace]:
        """``GET /recalls``: a namespace's traced recalls, newest first, one page (``limit``
        1..500, default 100). ``since`` (inclusive) / ``until`` (exclusive) bound the
        recall's time (datetimes or ISO 8601); ``q`` keeps the recalls whose query holds
        every word; ``interface`` one of rest, mcp, console, python, typescript, langgraph
        (another raises BadRequest). A token restricted to agents sees its agents' recalls
        and its own."""
        params = dict(user_id=user_id, agent_id=agent_id, actor=actor, interface=interface,
                      since=iso(since), until=iso(until), q=q, cursor=cursor, limit=limit)
        return self._run(Call("GET", "/recalls", _page("recalls", RecallTrace), params=params,
                              idempotent=True))

    def get_recall(self, recall_id: str) -> RecallTrace:
        """``GET /recalls/{recall_id}``: one trace with its results and feedback; NotFound
        for an unknown recall or another namespace's."""
        return self._run(Call("GET", f"/recalls/{seg(recall_id)}", _one(RecallTrace),
                              idempotent=True))

    def recall_feedback(self, recall_id: str, memory_id: str, *, grade: int | None = None,
                        useful: bool | None = None, note: str = "") -> Feedback:
        """``POST /recalls/{recall_id}/feedback``: whether result ``memory_id`` of the recall
        helped. Give exactly one of ``grade`` (0 useless or wrong, 1 related, 2 helpful, 3
        exactly what was needed) or ``useful`` (true: 3, false: 0), and an optional
        ``note`` (at most 2000 characters). Kept per actor (the token's user): giving it
        again replaces it, so a retry is harmless. Raises NotFound (unknown recall) and
        BadRequest (both or neither of grade and useful, a memory that was not among the
        recall's results: ``field`` memory_id)."""
        body: dict[str, Any] = {"memory_id": memory_id, "note": note}
        if grade is not None:
            body["grade"] = grade
        if useful is not None:
            body["useful"] = useful
        return self._run(Call("POST", f"/recalls/{seg(recall_id)}/feedback", _one(Feedback),
                              json=body, idempotent=True))
