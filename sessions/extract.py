"""Memories drawn from a conversation: the candidates of a session's turns, or of a pasted
text, and their writing as memories.

With a language model configured (``sessions.formation.llm``) the model is asked first
(``prompts.EXTRACT_*``; its JSON checked strictly: every seq one of the turns', every text
non-empty and bounded); any ``ModelUnavailable`` falls back to the local extractor
(``sessions.formation.extraction``), never failing the call. Candidates are written through
``memory_create_many``: the validation, dedup and supersession proposals of every write.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.db import transaction

from memories.errors import InvalidInput, NotFound
from memories.models import MemoryType
from memories.services import context as context_service
from memories.services.create import memory_create_many
from sessions.formation import extraction, llm, prompts
from sessions.formation.extraction import Candidate, Turn
from sessions.promote import session_context

log = logging.getLogger(__name__)

MAX_CANDIDATES = 500  # a model answer naming more is not believed
TYPES = {t.value for t in MemoryType}


def session_turns(session_id: str, *, first_seq: int | None = None,
                  last_seq: int | None = None) -> tuple[object, list[Turn]]:
    """``(session, turns)``: the session's messages (``first_seq..last_seq`` when given)
    as extraction turns, ``system`` ones included (the extractor skips them)."""
    from sessions.models import Session

    session = Session.objects.filter(session_id=session_id).first()
    if session is None:
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    rows = session.messages.order_by("seq")
    if first_seq is not None:
        rows = rows.filter(seq__gte=first_seq)
    if last_seq is not None:
        rows = rows.filter(seq__lte=last_seq)
    return session, [Turn(seq=m.seq, role=m.role, content=m.content, at=m.ts) for m in rows]


def _turn_lines(turns: list[Turn]) -> str:
    lines = []
    for turn in turns:
        if turn.role == "system":
            continue
        speaker, text = extraction.split_speaker(turn.content)
        date = f"{turn.at.day} {turn.at:%B %Y}" if turn.at else ""
        lines.append(f"{turn.seq} | {speaker or turn.role} | {date} | {text}")
    return "\n".join(lines)


def model_validator(turns: list[Turn]):
    """The strict check of a model's answer: ``{"memories": [{"content", "seqs", "type"?,
    "confidence"?}]}`` with every seq one of ``turns``' (not system) and every content
    non-empty and at most ``extraction.MAX_CONTENT`` characters; raises ValueError,
    TypeError or KeyError on anything else."""
    known = {t.seq for t in turns if t.role != "system"}

    def validate(answer) -> list[Candidate]:
        if not isinstance(answer, dict) or not isinstance(answer["memories"], list):
            raise TypeError("expected {\"memories\": [...]}")
        items = answer["memories"]
        if len(items) > MAX_CANDIDATES:
            raise ValueError("too many memories")
        out = []
        for item in items:
            if not isinstance(item, dict):
                raise TypeError("a memory is an object")
            content = item["content"]
            if not isinstance(content, str) or not content.strip():
                raise ValueError("empty content")
            if len(content) > extraction.MAX_CONTENT:
                raise ValueError("content too long")
            seqs = item["seqs"]
            if (not isinstance(seqs, list) or not seqs
                    or not all(type(s) is int for s in seqs)):
                raise TypeError("seqs is a non-empty list of integers")
            if not set(seqs) <= known:
                raise ValueError(f"unknown seqs {sorted(set(seqs) - known)}")
            kind = item.get("type", MemoryType.LONG_TERM.value)
            if kind not in TYPES:
                raise ValueError(f"unknown type {kind!r}")
            confidence = item.get("confidence", 0.5)
            if (isinstance(confidence, bool) or not isinstance(confidence, int | float)
                    or not 0 <= confidence <= 1):
                raise ValueError("confidence is a number between 0 and 1")
            out.append(Candidate(content=content.strip(), seqs=sorted(set(seqs)), type=kind,
                                 confidence=float(confidence)))
        return out

    return validate


def candidates(turns: list[Turn]) -> tuple[list[Candidate], str]:
    """``(candidates, method)``: the model's when one is configured and answers validly
    ("llm"), else the local extractor's ("local")."""
    if not any(t.role != "system" for t in turns):
        return [], "local"
    if llm.configured():
        messages = [{"role": "system", "content": prompts.EXTRACT_SYSTEM},
                    {"role": "user", "content": prompts.EXTRACT_USER.format(
                        turns=_turn_lines(turns))}]
        try:
            return llm.chat_json(messages, purpose="extraction",
                                 validate=model_validator(turns)), "llm"
        except llm.ModelUnavailable:
            pass  # logged and counted by the client; the local method answers
    return extraction.extract(turns), "local"


def session_extract(*, session_id: str, dry_run: bool = True, actor=None,
                    first_seq: int | None = None, last_seq: int | None = None) -> dict:
    """The candidate memories of a session's messages (``first_seq..last_seq``, default
    all): ``{"candidates", "method"}``, plus ``"memory_ids"`` (in candidate order) when not
    ``dry_run``: each written in the session's namespace and conversation (the session
    id), ``metadata.source = {"session_id", "seqs"}``."""
    session, turns = session_turns(session_id, first_seq=first_seq, last_seq=last_seq)
    found, method = candidates(turns)
    out = {"candidates": [c.as_dict() for c in found], "method": method}
    if dry_run:
        return out
    at = {t.seq: t for t in turns}
    items = [_item(session, at, c, method) for c in found]
    out["memory_ids"] = [m.memory_id for m, _ in write(items, actor=actor)]
    return out


def _item(session, at: dict[int, Turn], c: Candidate, method: str, *,
          importance: float | None = None, edited: bool = False) -> dict:
    """The ``memory_create_many`` item of candidate ``c`` of ``session`` (``at``: its
    turns by seq)."""
    last = at[c.seqs[-1]]
    extraction_meta = {"method": method, "confidence": round(c.confidence, 3)}
    if edited:
        extraction_meta["edited"] = True
    item = {
        "user_id": session.user_id, "conversation_id": session.session_id,
        "content": c.content, "type": c.type, "source": "session",
        "author": last.role[:128], "created_at": last.at,
        "agent_id": session.agent_id, "run_id": session.run_id,
        "context": session_context(session.session_id, c.seqs[-1]),
        "context_from": context_service.SESSION,
        "metadata": {"source": {"session_id": session.session_id, "seqs": c.seqs},
                     "extraction": extraction_meta}}
    if importance is not None:
        item["importance"] = importance
    return item


def candidates_write(*, session_id: str, found: list[dict], method: str = "local", actor=None,
                     reason: str = "accepted from the suggested memories"):
    """Several candidates (``as_dict`` shapes, e.g. those of a dry run not yet memories)
    written as ``session_extract(dry_run=False)`` writes each: ``[(memory,
    deduplicated)]``."""
    if not found:
        return []
    session, turns = session_turns(session_id)
    at = {t.seq: t for t in turns if t.role != "system"}
    items = []
    for c in found:
        if not c["seqs"] or not set(c["seqs"]) <= set(at):
            raise InvalidInput("a candidate names unknown messages", field="seqs")
        items.append(_item(session, at, Candidate(
            content=c["content"], seqs=sorted(set(c["seqs"])), type=c["type"],
            confidence=c.get("confidence", 0.0)), method))
    return write(items, actor=actor, reason=reason)


def candidate_accept(*, session_id: str, content: str, seqs: list[int], type: str,
                     method: str = "local", confidence: float = 0.0,
                     importance: float | None = None, edited: bool = False, actor=None,
                     reason: str = "accepted from the suggested memories"):
    """One candidate (as suggested, or edited) written as a memory of the session, like
    ``session_extract(dry_run=False)`` writes each: ``(memory, deduplicated)``. ``seqs``
    must name the session's non-system messages (InvalidInput otherwise)."""
    if not seqs:
        raise InvalidInput("a candidate names its source messages", field="seqs")
    session, turns = session_turns(session_id, first_seq=min(seqs), last_seq=max(seqs))
    at = {t.seq: t for t in turns if t.role != "system"}
    unknown = sorted(set(seqs) - set(at))
    if unknown:
        raise InvalidInput(f"unknown messages {unknown}", field="seqs")
    if type not in TYPES:
        raise InvalidInput(f"unknown type {type!r}", field="type")
    c = Candidate(content=content, seqs=sorted(set(seqs)), type=type, confidence=confidence)
    item = _item(session, at, c, method, importance=importance, edited=edited)
    return write([item], actor=actor, reason=reason)[0]


def write(items: list[dict], *, actor=None, reason: str = "extracted from a conversation"):
    """``memory_create_many`` of the candidates' items (nothing when there are none)."""
    if not items:
        return []
    with transaction.atomic():
        return memory_create_many(items=items, actor=actor, reason=reason)


def text_candidates(text: str, *, at: dt.datetime | None = None) -> tuple[list[Candidate], str]:
    """The candidates of a pasted transcript ("Speaker: text" lines) or a note:
    ``(candidates, method)``; seqs count the transcript's turns (or the note's sentences)
    from 1."""
    turns = extraction.parse_text(text, at=at)
    if not turns:
        raise InvalidInput("nothing to extract from", field="content")
    if llm.configured():
        found, method = candidates(turns)
        if method == "llm":
            return found, method
    return extraction.extract_text(text, at=at), "local"
