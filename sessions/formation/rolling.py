"""The rolling summary as the product writes it: the language model when one is configured,
else (and whenever it gives no usable answer) the local method of ``summary``.

``fold_summary`` folds turns into the previous summary (what ``session_fold`` calls on each
fold); ``session_summary`` summarises a whole transcript by folding it the same way, in
chunks, from an empty summary (what ``POST /sessions/{id}/summarise`` answers). Both answer
``(summary, method)``, method ``"local"`` or ``"llm"``. System turns never enter a summary.
"""

from __future__ import annotations

import logging

from sessions.formation import llm, prompts
from sessions.formation.summary import Turn, content_words, summarise

log = logging.getLogger(__name__)

CHUNK_CHARS = 24000  # characters of turns per model call when a whole session is summarised


def _transcript(turns: list[Turn]) -> str:
    return "\n".join(f"{t.speaker or t.role}: {' '.join(t.text.split())}" for t in turns)


def _from_model(previous: str, turns: list[Turn], max_chars: int) -> str:
    """The model's summary, checked: not blank, with words, cut to ``max_chars`` at a word
    boundary when it ran over. Raises llm.ModelUnavailable."""

    def valid(text: str) -> str:
        text = text.strip()
        if not content_words(text):
            raise ValueError("a blank summary")
        if len(text) > max_chars:
            text = text[:max_chars].rsplit(None, 1)[0].rstrip() if " " in text[:max_chars] \
                else text[:max_chars]
        return text

    messages = [
        {"role": "system", "content": prompts.SUMMARY_SYSTEM.format(max_chars=max_chars)},
        {"role": "user", "content": prompts.SUMMARY_USER.format(
            previous=previous.strip() or "(none)", turns=_transcript(turns))},
    ]
    return llm.chat(messages, purpose="summary", max_tokens=max_chars // 3 + 64,
                    validate=valid)


def fold_summary(previous: str, turns: list[Turn], *, max_chars: int,
                 use_model: bool = True) -> tuple[str, str]:
    """``previous`` with ``turns`` folded in, within ``max_chars``: ``(summary, method)``."""
    turns = [t for t in turns if t.role != "system"]
    if use_model and llm.configured() and turns:
        try:
            return _from_model(previous, turns, max_chars), "llm"
        except llm.ModelUnavailable as exc:  # logged and counted by the client
            log.info("summary by the local method (model: %s)", exc.reason)
    return summarise(previous, turns, max_chars=max_chars), "local"


def session_summary(turns: list[Turn], *, max_chars: int) -> tuple[str, str]:
    """A whole transcript's summary, folded chunk by chunk as the sessions fold: one model
    call per ``CHUNK_CHARS`` of turns. Once the model fails the rest is folded locally (no
    second wait for it); the method is ``llm`` only when the model wrote every chunk."""
    turns = [t for t in turns if t.role != "system"]
    if not (llm.configured() and turns):
        return summarise("", turns, max_chars=max_chars), "local"
    chunks, chunk, size = [], [], 0
    for turn in turns:
        if chunk and size + len(turn.text) > CHUNK_CHARS:
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(turn)
        size += len(turn.text)
    chunks.append(chunk)
    summary, methods = "", set()
    for chunk in chunks:
        summary, method = fold_summary(summary, chunk, max_chars=max_chars,
                                       use_model="local" not in methods)
        methods.add(method)
    return summary, "local" if "local" in methods else "llm"
