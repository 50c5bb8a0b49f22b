"""Sessions, ranking-lab objects and recall feedback in an export document (schema 4; the
feedback from schema 5).

``sessions``: ``[{"session_id", "user_id", "agent_id", "system_prompt", "metadata",
"summary", "summary_method", "summary_upto_seq", "ttl_seconds", "created_at", "updated_at",
"messages": [{"seq", "role", "content", "at"}]}]``, each with its whole transcript.
``lab``: ``{"profiles": [{"name", "created_by", "versions": [{"at", "actor", "reason",
setting…}]}], "query_sets": [{"name", "user_id", "queries", "notes", "created_by",
"created_at", "updated_at"}], "judgments": [{"user_id", "query", "memory_id", "grade",
"reviewer", "created_at", "updated_at"}], "runs": [{"name", "query_set" (its name), "k",
"reviewer", "created_by", "created_at", "profiles", "index_stats", "metrics", "per_query",
"unjudged"}]}``: every profile that is not built in (profiles are not a namespace's), and
the query sets, judgments and runs of the exported namespaces. ``feedback`` (schema 5):
``[{"recall_key", "user_id", "query", "memory_id", "actor", "grade", "note", "created_at",
"updated_at"}]``, the recall feedback of the exported namespaces (``recall_key`` the
recall's id; the recall traces themselves are not exported).

A replace import swaps the sessions, query sets (with their runs), judgments and recall
feedback of the document's namespaces for the document's, and each profile it holds for the
same-named one (a feedback item whose memory is not in the document is skipped and
counted); a merge import leaves them all as they are. Shape errors name the item
(``sessions[2].messages[0].at``); the writers check the values.
"""

from lab import judgments, query_sets, runs
from lab.models import EvalRun, Judgment, QuerySet
from memories.errors import InvalidInput
from memories.validation import clean_identifier, clean_json_object, parse_iso_datetime
from recalls import feedback as recall_feedback
from recalls.models import RecallFeedback
from search import profile_services
from search.models import RankingProfile
from sessions import services as session_services
from sessions.models import Session

SESSION_FIELDS = ("session_id", "user_id", "agent_id", "run_id", "system_prompt", "metadata",
                  "summary", "summary_method", "summary_upto_seq", "ttl_seconds", "created_at",
                  "updated_at", "messages")
LAB_KEYS = ("profiles", "query_sets", "judgments", "runs")
FEEDBACK_FIELDS = ("recall_key", "user_id", "query", "memory_id", "actor", "grade", "note",
                   "created_at", "updated_at")


def _iso(value):
    return value.isoformat() if value is not None else None


def sessions_export(*, user_id: str | None) -> list[dict]:
    rows = Session.objects.order_by("user_id", "created_at", "session_id")
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    out = []
    for s in rows.prefetch_related("messages"):
        item = {f: getattr(s, f) for f in SESSION_FIELDS[:-1]}
        item.update(created_at=_iso(s.created_at), updated_at=_iso(s.updated_at))
        item["messages"] = [{"seq": m.seq, "role": m.role, "content": m.content,
                             "at": _iso(m.ts)} for m in sorted(s.messages.all(),
                                                               key=lambda m: m.seq)]
        out.append(item)
    return out


def lab_export(*, user_id: str | None) -> dict:
    profiles = []
    for p in RankingProfile.objects.filter(builtin=False).order_by("name"):
        versions = [{"at": _iso(h.history_date),
                     "actor": h.history_user.get_username() if h.history_user else "",
                     "reason": h.history_change_reason or "",
                     **{f: getattr(h, f) for f in profile_services.SETTINGS}}
                    for h in p.history.order_by("history_date", "history_id")
                    .select_related("history_user") if h.history_type != "-"]
        profiles.append({"name": p.name, "created_by": p.created_by, "versions": versions})
    sets = QuerySet.objects.order_by("created_at", "id")
    grades = Judgment.objects.order_by("user_id", "query", "memory_id", "reviewer")
    evals = EvalRun.objects.select_related("query_set").order_by("created_at", "id")
    if user_id is not None:
        sets, grades = sets.filter(user_id=user_id), grades.filter(user_id=user_id)
        evals = evals.filter(query_set__user_id=user_id)
    evals = evals.filter(query_set__isnull=False)  # a run of a deleted set has no home
    return {
        "profiles": profiles,
        "query_sets": [{"name": q.name, "user_id": q.user_id, "queries": q.queries,
                        "notes": q.notes, "created_by": q.created_by,
                        "created_at": _iso(q.created_at), "updated_at": _iso(q.updated_at)}
                       for q in sets],
        "judgments": [{"user_id": j.user_id, "query": j.query, "memory_id": j.memory_id,
                       "grade": j.grade, "reviewer": j.reviewer,
                       "created_at": _iso(j.created_at), "updated_at": _iso(j.updated_at)}
                      for j in grades],
        "runs": [{"name": r.name, "query_set": r.query_set.name if r.query_set else None,
                  "k": r.k, "reviewer": r.reviewer, "created_by": r.created_by,
                  "created_at": _iso(r.created_at),
                  **{f: getattr(r, f) for f in runs.RUN_RESULTS}} for r in evals],
    }


def feedback_export(*, user_id: str | None) -> list[dict]:
    """The recall feedback of one namespace (or every one), oldest first."""
    rows = RecallFeedback.objects.order_by("user_id", "created_at", "id")
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    return [{"recall_key": f.recall_key, "user_id": f.user_id, "query": f.query,
             "memory_id": f.memory_id, "actor": f.actor, "grade": f.grade, "note": f.note,
             "created_at": _iso(f.created_at), "updated_at": _iso(f.updated_at)}
            for f in rows.iterator(chunk_size=2000)]


def _bad(where: str, message: str, field: str) -> InvalidInput:
    return InvalidInput(f"{where} {message}", field=field)


def _date(value, where: str, field: str, *, required: bool = True):
    if value in (None, "") and not required:
        return None
    try:
        return parse_iso_datetime(value, where)
    except InvalidInput:
        raise _bad(where, "must be an ISO 8601 date and time", field) from None


def _list(doc: dict, key: str, where: str, field: str) -> list:
    rows = doc.get(key) or []
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise _bad(where, "must be a list of objects", field)
    return rows


def _namespace(item: dict, where: str, field: str, namespaces: list[str]) -> None:
    if item.get("user_id") not in namespaces:
        raise _bad(f"{where}.user_id", f"must be one of the document's namespaces "
                   f"({', '.join(namespaces)})", field)


def document_sessions(doc: dict, namespaces: list[str]) -> list[dict] | None:
    """The sessions of a schema-4 document, their times parsed (None: it holds none, not
    even an empty list). Raises InvalidInput naming
    ``sessions[n]…`` for a bad shape, a namespace outside the document's, a session id
    twice or messages out of order."""
    if doc.get("sessions") is None:
        return None
    out, seen = [], set()
    for n, s in enumerate(_list(doc, "sessions", "sessions", "sessions")):
        where = f"sessions[{n}]"
        unknown = sorted(set(s) - set(SESSION_FIELDS))
        if unknown:
            raise _bad(f"{where}.{unknown[0]}", "is not a session field", "sessions")
        _namespace(s, where, "sessions", namespaces)
        try:
            session_id = clean_identifier(s.get("session_id"), "session_id")
            agent_id = clean_identifier(s.get("agent_id") or None, "agent_id", required=False)
            run_id = clean_identifier(s.get("run_id") or None, "run_id", required=False)
            metadata = clean_json_object(s.get("metadata") or {}, "metadata", max_depth=20,
                                         max_bytes=16384)
        except InvalidInput as exc:
            raise _bad(where, exc.message, "sessions") from None
        if session_id in seen:
            raise _bad(f"{where}.session_id", f"{session_id!r} is in the document twice",
                       "sessions")
        seen.add(session_id)
        messages, last = [], 0
        for k, m in enumerate(_list(s, "messages", f"{where}.messages", "sessions")):
            seq, content = m.get("seq"), m.get("content")
            if isinstance(seq, bool) or not isinstance(seq, int) or seq <= last:
                raise _bad(f"{where}.messages[{k}].seq", "must be a whole number above the "
                           "one before it", "sessions")
            if not isinstance(content, str) or not content.strip():
                raise _bad(f"{where}.messages[{k}].content", "must not be blank", "sessions")
            last = seq
            messages.append({"seq": seq, "role": m.get("role"), "content": content,
                             "at": _date(m.get("at"), f"{where}.messages[{k}].at", "sessions")})
        upto, ttl = s.get("summary_upto_seq", 0), s.get("ttl_seconds", 3600)
        for field, value in (("summary_upto_seq", upto), ("ttl_seconds", ttl)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _bad(f"{where}.{field}", "must be a whole number", "sessions")
        for field in ("system_prompt", "summary", "summary_method"):
            if not isinstance(s.get(field) or "", str):
                raise _bad(f"{where}.{field}", "must be a string", "sessions")
        created = _date(s.get("created_at"), f"{where}.created_at", "sessions")
        updated = _date(s.get("updated_at"), f"{where}.updated_at", "sessions", required=False)
        out.append({"session_id": session_id, "user_id": s["user_id"],
                    "agent_id": agent_id or "", "run_id": run_id or "",
                    "system_prompt": s.get("system_prompt") or "",
                    "metadata": metadata or {}, "summary": s.get("summary") or "",
                    "summary_method": (s.get("summary_method") or "")[:8],
                    "summary_upto_seq": min(upto, last), "ttl_seconds": ttl or 3600,
                    "created_at": created,
                    "updated_at": updated or max([created, *(m["at"] for m in messages)]),
                    "messages": messages})
    return out


def document_lab(doc: dict, namespaces: list[str]) -> dict | None:
    """The lab objects of a schema-4 document, their times parsed and their namespaces
    checked (None: it holds no ``lab``). Raises InvalidInput naming ``lab.<list>[n]``."""
    lab = doc.get("lab")
    if lab is None:
        return None
    if not isinstance(lab, dict) or set(lab) - set(LAB_KEYS):
        raise InvalidInput(f"lab must be an object of {', '.join(LAB_KEYS)}", field="lab")
    out = {key: _list(lab, key, f"lab.{key}", "lab") for key in LAB_KEYS}
    for key in ("query_sets", "judgments"):
        for n, item in enumerate(out[key]):
            _namespace(item, f"lab.{key}[{n}]", "lab", namespaces)
    dated = {"query_sets": ("created_at", "updated_at"), "judgments": ("created_at",
             "updated_at"), "runs": ("created_at",)}
    for key, fields in dated.items():
        out[key] = [{**item, **{f: _date(item.get(f), f"lab.{key}[{n}].{f}", "lab",
                                         required=False) for f in fields}}
                    for n, item in enumerate(out[key])]
    for n, p in enumerate(out["profiles"]):
        versions = p.get("versions")
        if not isinstance(versions, list) or not all(isinstance(v, dict) for v in versions):
            raise _bad(f"lab.profiles[{n}].versions", "must be a list of objects", "lab")
        p["versions"] = [{**v, "at": _date(v.get("at"), f"lab.profiles[{n}].versions[{k}].at",
                                           "lab")} for k, v in enumerate(versions)]
    return out


def document_feedback(doc: dict, namespaces: list[str]) -> list[dict] | None:
    """The recall feedback of a schema-5 document, its times parsed and its namespaces
    checked (None: it holds no ``feedback``). Raises InvalidInput naming ``feedback[n]``
    for a bad shape; the values are the writer's to check (``recalls.feedback``)."""
    if doc.get("feedback") is None:
        return None
    out = []
    for n, item in enumerate(_list(doc, "feedback", "feedback", "feedback")):
        where = f"feedback[{n}]"
        unknown = sorted(set(item) - set(FEEDBACK_FIELDS))
        if unknown:
            raise _bad(f"{where}.{unknown[0]}", "is not a feedback field", "feedback")
        _namespace(item, where, "feedback", namespaces)
        if not isinstance(item.get("memory_id"), str):
            raise _bad(f"{where}.memory_id", "must be a memory id", "feedback")
        out.append({**item, **{f: _date(item.get(f), f"{where}.{f}", "feedback",
                                        required=False) for f in ("created_at", "updated_at")}})
    return out


def extras_restore(*, sessions: list[dict] | None, lab: dict | None,
                   namespaces: list[str], feedback: list[dict] | None = None) -> dict:
    """Swap the namespaces' sessions, lab objects and recall feedback for the document's
    (checked by :func:`document_sessions`, :func:`document_lab` and
    :func:`document_feedback`; None, or a list the document does not hold: left as they
    are). Counts of what was written (``feedback_skipped``: feedback items whose memory the
    document does not hold)."""
    out = {}
    if feedback is not None:
        out.update(recall_feedback.feedback_restore(user_ids=namespaces, items=feedback))
    if sessions is not None:
        out["sessions"] = session_services.sessions_restore(user_ids=namespaces,
                                                            sessions=sessions)
    if lab is not None:
        out["profiles"] = profile_services.profiles_restore(items=lab["profiles"])
        sets = query_sets.querysets_restore(user_ids=namespaces, items=lab["query_sets"])
        out["query_sets"] = len(sets)
        out["judgments"] = judgments.judgments_restore(user_ids=namespaces,
                                                       items=lab["judgments"])
        out["runs"] = runs.runs_restore(items=lab["runs"], query_sets=sets)
    return out
