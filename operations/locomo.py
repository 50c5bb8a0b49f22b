"""LoCoMo parsing: pure functions shared by ``import_locomo`` and ``bench/quality.py``.

No Django, no Redis. A LoCoMo file (snap-research/LoCoMo ``data/locomo10.json``) is a list of
samples; only ``sample_id`` and ``conversation`` of each sample are read. A conversation holds
``session_N`` (a list of turns: ``speaker``, ``dia_id``, ``text`` and, for a shared photo,
``img_url`` / ``blip_caption``) and ``session_N_date_time`` ("1:56 pm on 8 May, 2023").

One turn becomes one memory (see :func:`iter_turns`):

* ``content`` = ``"speaker: text"``; a turn that shares a photo gets
  ``" [shares a photo: <blip_caption>]"`` appended (``captions=False`` leaves it out). The
  caption is what LoCoMo's own RAG baselines put in the turn ("... and shared <caption>"),
  and for a photo-only turn it is the only description of what was said.
* ``user_id`` = ``sample_id``, ``conversation_id`` = the session key (``"session_1"``).
* ``created_at`` = the session's date (UTC) plus the turn's index in seconds, so the order of
  turns survives a sort by time; ``None`` when the session has no date.
* ``metadata`` = ``{"dia_id", "speaker", "session": n}``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator

__all__ = [
    "SESSION_KEY_RE",
    "iter_samples",
    "iter_turns",
    "parse_session_date",
    "sessions",
    "turn_content",
]

SESSION_KEY_RE = re.compile(r"^session_(\d+)$")

# "1:56 pm on 8 May, 2023", "10:04 am on 19 December, 2023"; tolerant of case and spacing.
_DATE_RE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\s*,?\s*(\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: n
    for n, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}


def parse_session_date(value: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` -> ``datetime(2023, 5, 8, 13, 56, tzinfo=UTC)``.

    LoCoMo dates carry no time zone; they are taken as UTC. Month names may be abbreviated
    to three letters ("8 Sep, 2023"). Raises ``ValueError`` for anything else.
    """
    if not isinstance(value, str):
        raise ValueError(f"not a LoCoMo session date: {value!r}")
    match = _DATE_RE.match(value)
    if match is None:
        raise ValueError(f"not a LoCoMo session date: {value!r}")
    hour, minute, half, day, month_name, year = match.groups()
    hour, minute = int(hour), int(minute)
    month_name = month_name.lower()
    month = _MONTHS.get(month_name) or next(
        (n for name, n in _MONTHS.items() if len(month_name) >= 3 and name.startswith(month_name)),
        None,
    )
    if month is None or not 1 <= hour <= 12:
        raise ValueError(f"not a LoCoMo session date: {value!r}")
    hour = hour % 12 + (12 if half.lower() == "p" else 0)
    return dt.datetime(int(year), month, int(day), hour, minute, tzinfo=dt.UTC)


def sessions(conversation: dict) -> list[tuple[int, str, list[dict], str | None]]:
    """``[(n, "session_n", turns, date_string_or_None)]`` in session-number order.

    Keys that are not ``session_<n>`` holding a list (speaker names, dates, summaries) are
    ignored.
    """
    out = []
    for key, value in conversation.items():
        match = SESSION_KEY_RE.match(key)
        if match and isinstance(value, list):
            out.append((int(match.group(1)), key, value, conversation.get(f"{key}_date_time")))
    out.sort(key=lambda s: s[0])
    return out


def turn_content(turn: dict, *, captions: bool = True) -> str:
    """``"speaker: text"``, plus ``" [shares a photo: caption]"`` for a turn with a photo."""
    text = (turn.get("text") or "").strip()
    content = f"{turn['speaker']}: {text}"
    caption = (turn.get("blip_caption") or "").strip() if captions else ""
    if caption:
        content += f" [shares a photo: {caption}]"
    return content


# Neighbouring turns indexed with each turn (as its context field): two previous turns and
# the next one measured best on locomo_dev (docs/benchmarks.md, quality).
CONTEXT_PREVIOUS = 2
CONTEXT_NEXT = 1


def turn_context(turns: list[dict], index: int, *, captions: bool = True) -> str:
    """The text of the neighbouring turns of ``turns[index]`` in its own session (never
    another session's): the ``CONTEXT_PREVIOUS`` turns before it and the ``CONTEXT_NEXT``
    after it, without speaker names, one per line."""
    lo, hi = max(0, index - CONTEXT_PREVIOUS), min(len(turns), index + CONTEXT_NEXT + 1)
    return "\n".join(
        turn_content(turns[i], captions=captions).split(": ", 1)[-1]
        for i in range(lo, hi) if i != index)


def iter_turns(sample: dict, *, captions: bool = True, context: bool = True) -> Iterator[dict]:
    """One dict per dialog turn of ``sample``, in conversation order, ready for
    ``memory_create_many(items=[...])``.

    ``context`` adds the neighbouring turns of the same session (:func:`turn_context`).
    Reads only ``sample["sample_id"]`` and ``sample["conversation"]``. Raises ``KeyError``
    when either is missing and ``ValueError`` for a session date that does not parse.
    """
    sample_id = sample["sample_id"]
    conversation = sample["conversation"]
    for n, key, turns, date_string in sessions(conversation):
        start = parse_session_date(date_string) if date_string else None
        for index, turn in enumerate(turns):
            created = start + dt.timedelta(seconds=index) if start is not None else None
            yield {
                "user_id": sample_id,
                "conversation_id": key,
                "type": "long_term",
                "content": turn_content(turn, captions=captions),
                "context": turn_context(turns, index, captions=captions) if context else "",
                "importance": 0.5,
                "source": "locomo",
                "author": str(turn["speaker"])[:128],
                "created_at": created,
                "metadata": {
                    "dia_id": turn.get("dia_id"),
                    "speaker": turn["speaker"],
                    "session": n,
                },
            }


def iter_samples(data) -> Iterable[dict]:
    """The samples of a loaded LoCoMo document: a list of samples, or one sample."""
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return data
    raise ValueError("a LoCoMo file holds a JSON list of samples (or one sample object)")


def extraction_sessions(sample: dict) -> list[dict]:
    """The sessions of ``sample`` as a user would post them for extraction, with the gold
    evidence of their ``observation`` facts: ``[{"session": n, "date", "speakers": [first,
    second], "messages": [{"role", "content", "dia_id"}], "evidence": {seq}}]``.

    The session's first speaker is ``user``, the other ``assistant``; each message's content
    is ``"Speaker: text"`` (no photo caption: what a user would type); ``seq`` counts from 1
    in the session. ``evidence`` holds the seqs of the turns that the session's observation
    facts name (ids not in the session are dropped). Sessions without observations are left
    out.
    """
    observations = sample.get("observation") or {}
    out = []
    for n, _key, turns, date_string in sessions(sample["conversation"]):
        facts = observations.get(f"session_{n}_observation")
        if not facts or not turns:
            continue
        seq_of = {turn.get("dia_id"): seq for seq, turn in enumerate(turns, start=1)}
        evidence = set()
        for items in facts.values():
            for item in items:
                ids = item[1] if len(item) > 1 else []
                for dia_id in ids if isinstance(ids, list) else re.split(r"[;,\s]+", ids):
                    if dia_id in seq_of:
                        evidence.add(seq_of[dia_id])
        speakers: list[str] = []
        for turn in turns:
            if turn["speaker"] not in speakers:
                speakers.append(turn["speaker"])
        out.append({
            "session": n,
            "date": parse_session_date(date_string) if date_string else None,
            "speakers": speakers,
            "messages": [{"role": "user" if turn["speaker"] == speakers[0] else "assistant",
                          "content": f"{turn['speaker']}: {(turn.get('text') or '').strip()}",
                          "dia_id": turn.get("dia_id")} for turn in turns],
            "evidence": evidence,
        })
    return out


def turn_prf(selected: int, correct: int, gold: int) -> dict:
    """Precision, recall and F1 from counts (micro-averaged over sessions)."""
    p = correct / selected if selected else 0.0
    r = correct / gold if gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "selected": selected, "correct": correct, "gold": gold}
