"""Sessions (short-term conversations): the one writer of Session and Message.

The database keeps every message (the transcript outlives any TTL).
"""

import datetime as dt
import logging
import uuid

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Length
from django.utils import timezone

from integrations.webhooks import outbox
from memories import queue as job_queue
from memories import store
from memories.errors import InvalidInput, NotFound
from memories.validation import clean_identifier, clean_json_object, clean_text
from sessions import store as session_store
from sessions.formation.rolling import fold_summary, session_summary
from sessions.formation.summary import Turn
from sessions.models import Message, Session
from sessions.promote import messages_arrived

log = logging.getLogger(__name__)

ROLES = ("user", "assistant", "system", "tool")
DEFAULT_TTL_SECONDS = 3600
SUMMARY_CHARS = 2000  # the rolling summary's length at most


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is not None and timezone.is_naive(value):
        return value.replace(tzinfo=dt.UTC)
    return value


@transaction.atomic
def session_create(*, user_id: str, session_id: str | None = None, agent_id: str = "",
                   ttl_seconds: int | None = None, system_prompt: str = "",
                   metadata: dict | None = None, created_at: dt.datetime | None = None,
                   run_id: str = "") -> Session:
    """Create a session (``session_id`` generated when absent). Raises InvalidInput, also
    naming ``session_id`` when that id is taken: the same answer whichever namespace holds
    it, so a caller restricted to some namespaces is not told about sessions of others."""
    user_id = clean_identifier(user_id, "user_id")
    if session_id is None:
        session_id = f"sess_{uuid.uuid4().hex[:16]}"
    session_id = clean_identifier(session_id, "session_id")
    if agent_id:
        clean_identifier(agent_id, "agent_id")
    if run_id:
        clean_identifier(run_id, "run_id")
    ttl = DEFAULT_TTL_SECONDS if ttl_seconds is None else ttl_seconds
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= 30 * 24 * 3600:
        raise InvalidInput("ttl_seconds must be 1..2592000", field="ttl_seconds")
    if Session.objects.filter(session_id=session_id).exists():
        raise InvalidInput(f"session_id {session_id!r} is not available: choose another, or "
                           "leave it out for a generated one", field="session_id")
    metadata = clean_json_object(metadata, "metadata", max_depth=20, max_bytes=16384)
    if not isinstance(system_prompt or "", str):
        raise InvalidInput("system_prompt must be a string", field="system_prompt")
    clean_text(system_prompt or "", "system_prompt")
    now = _aware(created_at) or timezone.now()
    session = Session.objects.create(
        session_id=session_id, user_id=user_id, agent_id=agent_id or "",
        run_id=run_id or "", ttl_seconds=ttl,
        system_prompt=system_prompt or "", metadata=metadata or {}, created_at=now,
        updated_at=now)
    # A window left behind by a deleted session of the same id (Redis was down when it was
    # deleted) must not come back: drop it before the new one is written.
    transaction.on_commit(lambda: _mirror(session, [], fresh=True))
    return session


@transaction.atomic
def session_append(*, session_id: str, messages: list[dict]) -> int:
    """Append ``[{"role", "content", "at"?}]`` in order; returns the session's total length.

    ``at`` (aware or naive-as-UTC datetime): when the message was said, for transcripts
    loaded after the fact; default now. The memory promoted from the message before these
    gets the first of them as context before this returns (sessions.promote).

    Raises NotFound for an unknown session, InvalidInput for a bad role or blank content.
    """
    session = Session.objects.select_for_update().filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    for n, msg in enumerate(messages):
        if msg.get("role") not in ROLES:
            raise InvalidInput(f"messages[{n}].role must be one of {', '.join(ROLES)}",
                               field="role")
        if not isinstance(msg.get("content"), str) or not msg["content"].strip():
            raise InvalidInput(f"messages[{n}].content must not be blank", field="content")
        try:
            clean_text(msg["content"], "content")
        except InvalidInput as exc:
            raise InvalidInput(f"messages[{n}].{exc.message}", field="content",
                               index=n) from None
    seq = session.last_seq
    now = timezone.now()
    rows = []
    for msg in messages:
        seq += 1
        rows.append(Message(session=session, seq=seq, role=msg["role"], content=msg["content"],
                            ts=_aware(msg.get("at")) or now))
    Message.objects.bulk_create(rows)
    # A memory promoted from the message before these gains the first of them as context.
    messages_arrived(user_id=session.user_id, session_id=session_id,
                     first_new_seq=session.last_seq + 1)
    session.updated_at = max([now, *(r.ts for r in rows)])
    session.last_seq = seq
    session.unfolded_chars += sum(len(r.content) for r in rows)
    session.save(update_fields=["updated_at", "last_seq", "unfolded_chars"])
    transaction.on_commit(lambda: _mirror(session, rows))
    if _over_budget(session, seq):
        # By dotted path: the job module imports this one (writers never import jobs).
        job_queue.enqueue("sessions.jobs.session_fold_job", session.session_id, queue="default",
                          namespaces=[session.user_id])
    return seq


def _keep_within_budget(session: Session, last: int) -> int:
    """How many newest messages to keep: half the message limit, fewer if their estimated
    tokens pass half the token budget (at least one)."""
    keep, budget = 0, settings.MEMORY_SESSION_FOLD_TOKENS // 2
    newest = session.messages.filter(seq__gt=session.summary_upto_seq).order_by("-seq")
    for content in newest.values_list("content", flat=True)[:settings.MEMORY_SESSION_FOLD_AT // 2]:
        budget -= len(content) // 4
        if budget < 0 and keep:
            break
        keep += 1
    return keep


def _over_budget(session: Session, last_seq: int) -> bool:
    """Whether the unfolded window passed its size: ``MEMORY_SESSION_FOLD_AT`` messages, or
    ``MEMORY_SESSION_FOLD_TOKENS`` estimated tokens (characters / 4)."""
    if last_seq - session.summary_upto_seq > settings.MEMORY_SESSION_FOLD_AT:
        return True
    return session.unfolded_chars // 4 > settings.MEMORY_SESSION_FOLD_TOKENS


def _turns(messages) -> list[Turn]:
    """Messages as summary turns; system messages never enter a summary."""
    return [Turn(role=m.role, text=m.content, at=m.ts) for m in messages if m.role != "system"]


def session_fold(*, session_id: str, keep: int | None = None) -> dict:
    """Fold the oldest messages into the rolling summary, keeping the newest ``keep``
    (default: half the message limit and half the token budget) in the hot window.

    The summary is written by the language model when one is configured, else (and on any
    failure of it) by the local method (``sessions.formation.rolling``), before the session
    is locked: appends never wait for the model. A fold that finds another fold came first
    folds nothing. Every message stays in the database; after a fold each one is either a
    source of the summary (seq <= ``summary_upto_seq``) or in the window. Returns what was
    folded and ``method``.
    """
    session = Session.objects.filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    last = session.last_seq
    if keep is None:
        keep = _keep_within_budget(session, last)
    upto = last - keep
    start = session.summary_upto_seq
    if upto <= start:
        return {"folded": 0, "summary_upto_seq": start}
    folded = session.messages.filter(seq__gt=start, seq__lte=upto).order_by("seq")
    summary, method = fold_summary(session.summary, _turns(folded), max_chars=SUMMARY_CHARS)
    with transaction.atomic():
        return _fold_commit(session_id, start, upto, summary, method)


def _fold_commit(session_id: str, start: int, upto: int, summary: str, method: str) -> dict:
    session = Session.objects.select_for_update().filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    if session.summary_upto_seq != start:  # another fold came first: its summary stands
        return {"folded": 0, "summary_upto_seq": session.summary_upto_seq}
    session.summary = summary
    session.summary_method = method
    session.summary_upto_seq = upto
    session.unfolded_chars = session.messages.filter(seq__gt=upto).aggregate(
        n=Sum(Length("content")))["n"] or 0
    session.save(update_fields=["summary", "summary_method", "summary_upto_seq",
                                "unfolded_chars"])
    outbox.outbox_record(type="session.folded", namespace=session.user_id, data={"session": {
        "session_id": session.session_id, "user_id": session.user_id,
        "agent_id": session.agent_id, "summary": session.summary, "folded": upto - start,
        "summary_upto_seq": upto}})

    def trim():
        try:
            session_store.window_trim(session, start + 1, upto)
        except store.RedisError as exc:
            log.warning("session window not trimmed: %s", type(exc).__name__)

    transaction.on_commit(trim)
    if settings.MEMORY_EXTRACT_ON_FOLD:  # enqueued on commit, as every job
        job_queue.enqueue("sessions.jobs.session_extract_job", session.session_id, start + 1,
                          upto, queue="default", namespaces=[session.user_id])
    return {"folded": upto - start, "summary_upto_seq": upto, "method": method}


def session_summarise(*, session_id: str, max_chars: int | None = None) -> dict:
    """The summary of the whole session now, by the code the fold uses (read-only: the
    session is not changed): ``{"summary", "method", "chars"}``. Raises NotFound,
    InvalidInput for ``max_chars`` outside 100..20000."""
    if max_chars is None:
        max_chars = SUMMARY_CHARS
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) \
            or not 100 <= max_chars <= 20000:
        raise InvalidInput("max_chars must be 100..20000", field="max_chars")
    session = Session.objects.filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    summary, method = session_summary(_turns(session.messages.order_by("seq")),
                                      max_chars=max_chars)
    return {"summary": summary, "method": method, "chars": len(summary)}


def _mirror(session: Session, rows: list[Message], *, fresh: bool = False) -> None:
    try:
        if fresh:
            session_store.window_drop(session_store.keys(session))
        session_store.window_append(session, rows)
    except store.RedisError as exc:
        log.warning("session window not mirrored: %s", type(exc).__name__)


@transaction.atomic
def session_delete(*, session_id: str) -> None:
    """Delete a session, its transcript and its hot window. Raises NotFound."""
    session = Session.objects.filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    keys = session_store.keys(session)  # before delete() clears the primary key
    session.delete()

    def drop():
        try:
            session_store.window_drop(keys)
        except store.RedisError as exc:  # expires by its TTL; a new session drops it first
            log.warning("session window not dropped: %s", type(exc).__name__)

    transaction.on_commit(drop)


def _window_whole(messages: list[dict], session: Session, wanted: int) -> bool:
    """Whether the hot window can answer: ``wanted`` messages or more, consecutive seqs,
    reaching the session's last one (a later append may have reached it meanwhile)."""
    if len(messages) < wanted:
        return False
    if not messages:
        return True
    seqs = [m["seq"] for m in messages]
    return seqs[-1] >= session.last_seq and seqs == list(range(seqs[0], seqs[0] + len(seqs)))


def session_context(*, session_id: str, last: int = 20, max_tokens: int | None = None,
                    at: dt.datetime | None = None) -> dict:
    """``{"summary", "summary_method", "messages": [{"seq", "role", "content", "at"}] oldest
    first, "total", "hot"}``.

    From the hot window when it holds enough, else from the database (which also answers
    ``at``: what the agent had seen at that moment). ``max_tokens`` keeps the newest
    messages whose estimated tokens (characters / 4, at least 1) fit. Raises NotFound.
    """
    session = Session.objects.filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    total = session.last_seq  # seqs run 1..last_seq, and messages are never removed alone
    upto = session.summary_upto_seq if at is None else 0
    hot, messages = False, None
    if at is None:
        try:
            messages = session_store.window_read(session, last)
            hot = messages is not None
        except store.RedisError:
            messages = None
        if messages is not None:  # a fold whose trim failed leaves its messages behind
            messages = [m for m in messages if m["seq"] > upto]
        if messages is not None and not _window_whole(messages, session,
                                                      min(last, total - upto)):
            # Fewer than asked, or a gap left by an append while Redis was down: read the
            # truth, and fill the window again for the next read.
            messages = None
            try:
                session_store.window_warm(session)
            except store.RedisError as exc:
                log.warning("session window not refilled: %s", type(exc).__name__)
    if messages is None:
        rows = session.messages.filter(seq__gt=upto)
        if at is not None:
            rows = rows.filter(ts__lte=_aware(at))
        rows = list(rows.order_by("-seq")[:last])[::-1]
        messages = [{"seq": m.seq, "role": m.role, "content": m.content,
                     "at": m.ts.isoformat()} for m in rows]
    if max_tokens is not None:
        kept, budget = [], max_tokens
        for m in reversed(messages):
            cost = max(1, len(m["content"]) // 4)
            if cost > budget:
                break
            kept.append(m)
            budget -= cost
        messages = kept[::-1]
    return {"summary": session.summary if at is None else "",
            "summary_method": session.summary_method if at is None else "",
            "total": total, "hot": hot,
            "messages": [{"seq": m["seq"], "role": m["role"], "content": m["content"],
                          "at": m["at"]} for m in messages]}


@transaction.atomic
def sessions_restore(*, user_ids: list[str], sessions: list[dict]) -> int:
    """Replace every session of ``user_ids`` by ``sessions`` (a backup's, checked by
    ``operations.export_extras``: ``{"session_id", "user_id", "agent_id", "run_id",
    "system_prompt", "metadata", "summary", "summary_method", "summary_upto_seq", "ttl_seconds",
    "created_at", "updated_at", "messages": [{"seq", "role", "content", "at"}]}``, times
    aware datetimes), each with its transcript and summary as they were. Their hot windows
    are dropped after commit (reads warm them from the database). Returns how many.
    Raises InvalidInput naming ``sessions[n]`` for a session id another namespace holds
    or a message that is not one."""
    old = list(Session.objects.filter(user_id__in=user_ids))
    taken = set(Session.objects.exclude(user_id__in=user_ids).filter(
        session_id__in=[s["session_id"] for s in sessions]).values_list("session_id", flat=True))
    rows, messages = [], []
    for n, spec in enumerate(sessions):
        if spec["session_id"] in taken:
            raise InvalidInput(f"sessions[{n}].session_id {spec['session_id']!r} is not "
                               "available", field="sessions", index=n)
        session = Session(**{k: v for k, v in spec.items() if k != "messages"})
        for m in spec["messages"]:
            if m["role"] not in ROLES:
                raise InvalidInput(f"sessions[{n}].messages role must be one of "
                                   f"{', '.join(ROLES)}", field="sessions", index=n)
            clean_text(m["content"], "content")
            messages.append(Message(session=session, seq=m["seq"], role=m["role"],
                                    content=m["content"], ts=m["at"]))
        session.last_seq = max((m["seq"] for m in spec["messages"]), default=0)
        session.unfolded_chars = sum(len(m["content"]) for m in spec["messages"]
                                     if m["seq"] > session.summary_upto_seq)
        rows.append(session)
    gone = [session_store.keys(s) for s in old]
    Session.objects.filter(user_id__in=user_ids).delete()
    Session.objects.bulk_create(rows, batch_size=500)
    Message.objects.bulk_create(messages, batch_size=1000)

    def drop():
        try:
            for keys in gone + [session_store.keys(s) for s in rows]:
                session_store.window_drop(keys)
        except store.RedisError as exc:  # each expires by its TTL
            log.warning("session windows not dropped after a restore: %s", type(exc).__name__)

    transaction.on_commit(drop)
    return len(rows)
