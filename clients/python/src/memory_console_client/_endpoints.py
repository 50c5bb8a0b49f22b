"""Every API call, written once: each method builds a :class:`Call` and hands it to
``self._run``, which the sync client executes and the async client turns into a coroutine.

Argument names are the API's field names. ``None`` means "not sent" (the server's default).
Paths are relative to ``/api/v1``. Raises: the :mod:`~memory_console_client.errors` classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import models as m
from ._answers import _job_or_plan, _none, _one, _page, _raw
from ._http import Call, compact, iso, seg
from ._recall_log_calls import RecallLogCalls
from ._session_endpoints import SessionEndpoints
from ._webhook_endpoints import WebhookEndpoints


class Endpoints(SessionEndpoints, WebhookEndpoints, RecallLogCalls):
    """The API's calls (see the README for what each does); the session, webhook and recall
    log calls are inherited."""

    def _run(self, call: Call) -> Any:  # pragma: no cover - provided by the clients
        raise NotImplementedError

    # memories ---------------------------------------------------------------------------
    def remember(self, user_id: str, content: str, *, conversation_id: str | None = None,
                 type: m.MemoryType | None = None, importance: float | None = None,
                 tags: list[str] | None = None, metadata: Mapping[str, Any] | None = None,
                 source: str | None = None, author: str | None = None,
                 keywords: list[str] | None = None, ttl_seconds: int | None = None,
                 created_at: datetime | str | None = None, context: str | None = None,
                 supersedes: list[str] | None = None, valid_from: datetime | str | None = None,
                 supersession: m.Supersession | None = None,
                 infer: bool = False, agent_id: str | None = None,
                 run_id: str | None = None) -> m.Memory | m.Inferred:
        """``POST /memories``: 201 a new memory, or 200 the live duplicate
        (``deduplicated`` true). ``ttl_seconds`` only for ``short_term``. Never retried.

        ``infer=True``: ``content`` is a chat transcript ("Speaker: text" lines) or a note;
        the memories extracted from it are written instead of the text, each with the other
        fields, and an :class:`~memory_console_client.models.Inferred` lists them.

        Facts over time: ``supersedes`` names the memories this one makes no longer true
        (they stay readable, ``superseded_by`` this one, and leave recall); ``valid_from``
        (datetime or ISO 8601) when the fact began to hold (default: now); ``supersession``
        ``off`` / ``propose`` / ``apply`` for the supersessions the server finds itself.

        Agent scope: ``agent_id`` (the agent writing it) and ``run_id`` (its run), set once
        here and never changed; a token restricted to agents must name one of them."""
        body = compact(dict(user_id=user_id, content=content, conversation_id=conversation_id,
                            type=type, importance=importance, tags=tags,
                            metadata=dict(metadata) if metadata is not None else None,
                            source=source, author=author, keywords=keywords,
                            ttl_seconds=ttl_seconds, created_at=iso(created_at),
                            context=context, supersedes=supersedes,
                            valid_from=iso(valid_from), supersession=supersession,
                            agent_id=agent_id, run_id=run_id))
        if infer:
            body["infer"] = True
            return self._run(Call("POST", "/memories", _one(m.Inferred), json=body))
        return self._run(Call("POST", "/memories", _one(m.Memory), json=body))

    def get_memory(self, memory_id: str) -> m.Memory:
        return self._run(Call("GET", f"/memories/{seg(memory_id)}", _one(m.Memory),
                              idempotent=True))

    def list_memories(self, user_id: str, *, conversation_id: str | None = None,
                      type: m.MemoryType | None = None, metadata: Mapping[str, Any] | None = None,
                      include_forgotten: bool | None = None, cursor: str | None = None,
                      limit: int | None = None, since: datetime | str | None = None,
                      until: datetime | str | None = None, author: str | None = None,
                      tags: list[str] | None = None, agent_id: str | None = None,
                      run_id: str | None = None, now: datetime | str | None = None,
                      as_of: datetime | str | None = None) -> m.Page[m.Memory]:
        """``GET /memories``: one namespace's memories, newest first, one page.
        ``conversation_id=""`` asks for the user-wide ones (no conversation);
        ``metadata`` filters on exact string values at dotted paths (``{"project.name":
        "apollo"}``). The filters :meth:`recall` takes: ``since`` (inclusive) / ``until``
        (exclusive) bounds of ``created_at`` (datetimes or ISO 8601), ``author``, ``tags``
        (every one), ``agent_id``, ``run_id``; ``as_of`` or ``now`` keeps the facts valid
        then (without either, every fact whatever its validity)."""
        params: dict[str, Any] = dict(user_id=user_id, conversation_id=conversation_id,
                                      type=type, cursor=cursor, limit=limit,
                                      since=iso(since), until=iso(until), author=author,
                                      tags=tags, agent_id=agent_id, run_id=run_id,
                                      now=iso(now), as_of=iso(as_of))
        if include_forgotten is not None:
            params["include_forgotten"] = int(include_forgotten)
        for key, value in (metadata or {}).items():
            params[f"metadata.{key}"] = value
        return self._run(Call("GET", "/memories", _page("memories", m.Memory), params=params,
                              idempotent=True))

    def list_namespaces(self, *, user_id: str | None = None, cursor: str | None = None,
                        limit: int | None = None) -> m.Page[m.NamespaceRow]:
        """``GET /namespaces``: every (user_id, conversation_id) pair holding live memories,
        ordered by both (one user's alone with ``user_id``)."""
        return self._run(Call("GET", "/namespaces", _page("namespaces", m.NamespaceRow),
                              params={"user_id": user_id, "cursor": cursor, "limit": limit},
                              idempotent=True))

    def update_memory(self, memory_id: str, *, content: str | None = None,
                      importance: float | None = None, tags: list[str] | None = None,
                      type: m.MemoryType | None = None,
                      metadata: Mapping[str, Any] | None = None, context: str | None = None,
                      reason: str | None = None, version: int | None = None,
                      supersedes: list[str] | None = None,
                      valid_from: datetime | str | None = None,
                      supersession: m.Supersession | None = None) -> m.Memory:
        """``PATCH /memories/{id}``: a new version. With ``version`` (the version you read),
        a stale one raises :class:`~memory_console_client.errors.Conflict`. ``supersedes``,
        ``valid_from`` and ``supersession`` as :meth:`remember` takes them."""
        body = compact(dict(content=content, importance=importance, tags=tags, type=type,
                            metadata=dict(metadata) if metadata is not None else None,
                            context=context, reason=reason, version=version,
                            supersedes=supersedes, valid_from=iso(valid_from),
                            supersession=supersession))
        return self._run(Call("PATCH", f"/memories/{seg(memory_id)}", _one(m.Memory),
                              json=body))

    def update(self, memory_id: str, **fields: Any) -> m.Memory:
        """:meth:`update_memory` by a shorter name."""
        return self.update_memory(memory_id, **fields)

    def invalidate(self, memory_id: str, reason: str,
                   valid_until: datetime | str | None = None) -> m.Memory:
        """``POST /memories/{id}/invalidate``: end the fact with no replacement ("no longer
        lives in Porto") at ``valid_until`` (default now); it stays readable. A fact that
        ended already raises Conflict."""
        return self._run(Call("POST", f"/memories/{seg(memory_id)}/invalidate",
                              _one(m.Memory),
                              json=compact({"reason": reason,
                                            "valid_until": iso(valid_until)})))

    def revalidate(self, memory_id: str, reason: str) -> m.Memory:
        """``POST /memories/{id}/revalidate``: undo an end or a supersession."""
        return self._run(Call("POST", f"/memories/{seg(memory_id)}/revalidate",
                              _one(m.Memory), json={"reason": reason}))

    def forget(self, memory_id: str, *, reason: str | None = None) -> None:
        """``DELETE /memories/{id}``: soft forget (restorable)."""
        return self._run(Call("DELETE", f"/memories/{seg(memory_id)}", _none,
                              params={"reason": reason}, idempotent=True))

    def purge(self, memory_id: str, *, reason: str | None = None) -> None:
        """``DELETE /memories/{id}?purge=1`` (admin): hard delete; the audit record stays."""
        return self._run(Call("DELETE", f"/memories/{seg(memory_id)}", _none,
                              params={"reason": reason, "purge": 1}, idempotent=True))

    def restore(self, memory_id: str, *, reason: str | None = None) -> m.Memory:
        return self._run(Call("POST", f"/memories/{seg(memory_id)}/restore", _one(m.Memory),
                              json=compact({"reason": reason})))

    def rollback(self, memory_id: str, *, version: int, reason: str) -> m.Memory:
        """(admin) A new version equal to ``version``; ``version=0`` undoes a merge."""
        return self._run(Call("POST", f"/memories/{seg(memory_id)}/rollback", _one(m.Memory),
                              json={"version": version, "reason": reason}))

    def promote(self, memory_id: str, *, reason: str | None = None) -> m.Memory:
        """A working or short-term memory → user-wide long-term (``deduplicated`` when the
        user already has it)."""
        return self._run(Call("POST", f"/memories/{seg(memory_id)}/promote", _one(m.Memory),
                              json=compact({"reason": reason})))

    def bulk(self, memory_ids: list[str], *, action: str, importance: float | None = None,
             reason: str | None = None) -> list[m.Memory]:
        """``POST /memories/bulk``: ``action`` ``importance`` / ``forget`` / ``restore``."""
        body = compact(dict(memory_ids=memory_ids, action=action, importance=importance,
                            reason=reason))
        return self._run(Call("POST", "/memories/bulk", lambda b: [
            m.Memory.model_validate(x) for x in b["memories"]], json=body))

    def history(self, memory_id: str) -> list[m.Version]:
        """Every version, oldest first."""
        return self._run(Call("GET", f"/memories/{seg(memory_id)}/history",
                              lambda b: [m.Version.model_validate(v) for v in b["versions"]],
                              idempotent=True))

    def ready(self, memory_id: str) -> m.Ready:
        return self._run(Call("GET", f"/memories/{seg(memory_id)}/ready", _one(m.Ready),
                              idempotent=True))

    # search -----------------------------------------------------------------------------
    def recall(self, user_id: str, query: str, *, conversation_id: str | None = None,
               limit: int | None = None, types: list[m.MemoryType] | None = None,
               profile: str | None = None, match_mode: m.MatchMode | None = None,
               as_of: datetime | str | None = None, include_superseded: bool | None = None,
               since: datetime | str | None = None, until: datetime | str | None = None,
               author: str | None = None, tags: list[str] | None = None,
               agent_id: str | None = None, run_id: str | None = None,
               metadata: Mapping[str, str] | None = None, now: datetime | str | None = None
               ) -> m.RecallResult:
        """``POST /recall`` (read-only, so retried like a GET). ``limit`` 1..100. Answers the
        facts valid now; ``as_of`` (datetime or ISO 8601) the facts that held then;
        ``include_superseded`` every match, each with ``valid_until`` / ``superseded_by``.

        Filters keep the matches that pass (scores unchanged): ``since`` (inclusive) /
        ``until`` (exclusive) bounds of ``created_at``, ``author``, ``tags`` (every one),
        ``agent_id``, ``run_id``, ``metadata`` (dotted path -> string); ``now`` is the
        moment time words and validity count from. An empty ``query`` with a filter lists
        the matches, newest first."""
        body = compact(dict(user_id=user_id, query=query, conversation_id=conversation_id,
                            limit=limit, types=types, profile=profile, match_mode=match_mode,
                            as_of=iso(as_of), include_superseded=include_superseded,
                            since=iso(since), until=iso(until), author=author, tags=tags,
                            agent_id=agent_id, run_id=run_id, now=iso(now),
                            metadata=dict(metadata) if metadata is not None else None))
        return self._run(Call("POST", "/recall", _one(m.RecallResult), json=body,
                              idempotent=True))

    # the review queue of proposed supersessions ----------------------------------------
    def conflicts(self, user_id: str | None = None, status: m.ConflictStatus = "open", *,
                  cursor: str | None = None, limit: int | None = None
                  ) -> m.Page[m.Proposal]:
        """``GET /conflicts``: supersessions the server proposed (``newer`` would make
        ``older`` no longer true), newest first; without ``user_id`` every namespace the
        token reaches."""
        return self._run(Call("GET", "/conflicts", _page("conflicts", m.Proposal),
                              params={"user_id": user_id, "status": status, "cursor": cursor,
                                      "limit": limit}, idempotent=True))

    def accept_conflict(self, conflict_id: int, reason: str = "") -> m.Proposal:
        """``POST /conflicts/{id}/accept``: ``older`` is superseded by ``newer``."""
        return self._run(Call("POST", f"/conflicts/{int(conflict_id)}/accept",
                              _one(m.Proposal), json={"reason": reason}))

    def reject_conflict(self, conflict_id: int, reason: str = "") -> m.Proposal:
        """``POST /conflicts/{id}/reject``: both hold (an accepted one is undone); the pair
        is not proposed again."""
        return self._run(Call("POST", f"/conflicts/{int(conflict_id)}/reject",
                              _one(m.Proposal), json={"reason": reason}))

    def analyze(self, text: str, *, profile: str | None = None) -> m.Analysis:
        return self._run(Call("POST", "/analyze", _one(m.Analysis),
                              json=compact({"text": text, "profile": profile}), idempotent=True))

    def list_profiles(self, *, cursor: str | None = None, limit: int | None = None
                      ) -> m.Page[m.Profile]:
        return self._run(Call("GET", "/profiles", _page("profiles", m.Profile),
                              params={"cursor": cursor, "limit": limit}, idempotent=True))

    def create_profile(self, name: str, **fields: Any) -> m.Profile:
        """``POST /profiles`` with the profile fields (``ranker``, ``k1``, ``b``, weights...)."""
        return self._run(Call("POST", "/profiles", _one(m.Profile),
                              json={"name": name, **fields}))

    def update_profile(self, name: str, **fields: Any) -> m.Profile:
        return self._run(Call("PATCH", f"/profiles/{seg(name)}", _one(m.Profile), json=fields))

    def evaluate(self, *, profile: str | None, k: int, queries: list[dict[str, Any]]
                 ) -> m.Evaluation:
        """``POST /evaluate``: ``queries`` ``[{"user_id", "query", "relevant"}]`` with
        ``relevant`` a list of memory ids or ``{memory_id: grade 0-3}``."""
        body = compact({"profile": profile, "k": k, "queries": queries})
        return self._run(Call("POST", "/evaluate", _one(m.Evaluation), json=body,
                              idempotent=True))

    # operations -------------------------------------------------------------------------
    def reindex(self, *, user_id: str | None = None) -> m.JobAccepted:
        return self._run(Call("POST", "/reindex", _one(m.JobAccepted),
                              json=compact({"user_id": user_id})))

    def reconcile(self) -> m.JobAccepted:
        return self._run(Call("POST", "/index/reconcile", _one(m.JobAccepted)))

    def job(self, job_id: str) -> m.Job:
        return self._run(Call("GET", f"/jobs/{seg(job_id)}", _one(m.Job), idempotent=True))

    def index_health(self) -> m.IndexHealth:
        return self._run(Call("GET", "/index/health", _one(m.IndexHealth), idempotent=True))

    def audit(self, *, actor: str | None = None, action: str | None = None,
              target: str | None = None, since: str | None = None, cursor: str | None = None,
              limit: int | None = None) -> m.Page[m.AuditEvent]:
        """``GET /audit``, newest first."""
        params = dict(actor=actor, action=action, target=target, since=since, cursor=cursor,
                      limit=limit)
        return self._run(Call("GET", "/audit", _page("events", m.AuditEvent), params=params,
                              idempotent=True))

    def export(self, user_id: str) -> m.ExportDocument:
        return self._run(Call("GET", "/export", _one(m.ExportDocument),
                              params={"user_id": user_id}, idempotent=True))

    def import_document(self, document: Mapping[str, Any], *, mode: str | None = None
                        ) -> dict[str, Any]:
        """``POST /import`` an export document; ``mode="replace"`` swaps the namespace."""
        return self._run(Call("POST", "/import", _raw, json=dict(document),
                              params={"mode": mode}))

    def cleanup(self, user_id: str, *, dry_run: bool = False) -> Any:
        """The forgetting policy: its plan (dict) when ``dry_run``, else a JobAccepted."""
        return self._run(Call("POST", "/cleanup", _job_or_plan(_raw),
                              json={"user_id": user_id, "dry_run": dry_run}))

    def consolidate(self, user_id: str, *, dry_run: bool = False
                    ) -> m.JobAccepted | m.ConsolidationPlan:
        return self._run(Call("POST", "/consolidate", _job_or_plan(_one(m.ConsolidationPlan)),
                              json={"user_id": user_id, "dry_run": dry_run}))
