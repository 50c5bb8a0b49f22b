"""The local extractor: which conversation turns state something worth remembering.

PURE: no Django, no Redis. A turn is scored by a logistic model over features that do not
depend on the conversation's topic or names (who speaks of themselves, what tense, whether it
names a time, a place or a person, whether it is only a question, a greeting or a reaction,
what the turns around it do), with weights in ``extraction_weights.py`` (trained by
``bench/train_extraction.py`` on the LoCoMo dev conversations, checked on conversations held
out of training). A turn whose score reaches the threshold becomes one candidate memory that
stands alone: ``"Caroline (8 May 2023): I went to an LGBTQ support group yesterday"``, with
its provenance (``seqs``), ``type`` and ``confidence`` (the score, 0..1).

``parse_text`` turns a pasted transcript ("Speaker: text" lines) or a note into turns, for a
write with ``infer``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sessions.formation import extraction_weights

__all__ = ["Candidate", "Turn", "extract", "extract_text", "features", "parse_text", "scores"]

MAX_CONTENT = 2000  # characters of a candidate's text (the turn's own text is cut there)


@dataclass(frozen=True)
class Turn:
    seq: int
    role: str
    content: str
    at: dt.datetime | None = None


@dataclass
class Candidate:
    content: str
    seqs: list[int]
    type: str = "long_term"
    confidence: float = 0.0
    speaker: str = field(default="", compare=False)

    def as_dict(self) -> dict:
        return {"content": self.content, "seqs": list(self.seqs), "type": self.type,
                "confidence": round(self.confidence, 3)}


# "Caroline: text", "Dr. Ana Ruiz: text" — a short name before the colon.
_SPEAKER_RE = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}):\s+(\S.*)$", re.S)
_NOT_SPEAKERS = {"Note", "Notes", "Re", "Subject", "Update", "Todo", "TODO", "PS", "P.S",
                 "Edit", "Http", "Https", "Warning", "Error", "Tip"}
_WORD_RE = re.compile(r"[a-z0-9']+")
_SENT_RE = re.compile(r"[^.!?\n]+[.!?]*")
_CAP_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")

_FIRST = {"i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself", "we", "we're",
          "we've", "we'll", "our", "us", "ours", "im", "ive"}
_SECOND = {"you", "your", "you're", "you've", "yours", "yourself", "u", "ur"}
_GREET = {"hey", "hi", "hello", "bye", "goodbye", "yo", "hiya", "morning", "evening", "night"}
_REACT = {"wow", "thanks", "thank", "congrats", "congratulations", "cool", "awesome", "great",
          "nice", "sounds", "glad", "sorry", "yeah", "yes", "yep", "no", "haha", "lol", "omg",
          "aww", "ah", "oh", "ok", "okay", "sure", "totally", "absolutely", "exactly", "agreed",
          "amazing", "love", "right", "true", "definitely", "good", "hope", "that's", "that",
          "it's", "what", "so", "really", "woah", "whoa", "incredible", "impressive",
          "fantastic", "beautiful", "cheers"}
_TIME = {"yesterday", "today", "tomorrow", "tonight", "ago", "recently", "weekend", "week",
         "month", "year", "last", "next", "soon", "lately", "monday", "tuesday", "wednesday",
         "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april",
         "may", "june", "july", "august", "september", "october", "november", "december",
         "summer", "winter", "spring", "fall", "autumn", "morning", "evening", "days", "weeks",
         "months", "years", "since", "birthday", "christmas", "holiday", "holidays"}
_PLAN = {"plan", "planning", "plans", "going", "gonna", "will", "i'll", "we'll", "hope",
         "hoping", "want", "wanna", "thinking", "about", "looking", "forward", "intend",
         "schedule", "scheduled", "trip", "decided", "decide", "deciding", "goal", "goals"}
_PAST = {"went", "got", "started", "finished", "joined", "bought", "visited", "made", "took",
         "had", "was", "were", "did", "tried", "met", "won", "lost", "moved", "adopted",
         "signed", "attended", "saw", "found", "learned", "began", "left", "came", "gave",
         "built", "wrote", "read", "painted", "ran", "received", "became", "been", "just",
         "finally", "quit", "launched", "released", "graduated", "volunteered", "traveled",
         "travelled", "hosted", "organized", "created", "completed", "decided", "chose"}
_PREF = {"love", "loves", "like", "likes", "enjoy", "enjoys", "favorite", "favourite",
         "prefer", "hate", "passion", "passionate", "into", "fan", "obsessed", "hobby",
         "allergic", "allergy", "vegan", "vegetarian", "can't", "never", "always"}
_PEOPLE = {"mom", "mother", "dad", "father", "kids", "kid", "son", "daughter", "wife",
           "husband", "friend", "friends", "family", "brother", "sister", "partner", "dog",
           "cat", "pet", "pets", "parents", "grandma", "grandpa", "boss", "team", "colleague",
           "coworkers", "children", "baby", "girlfriend", "boyfriend", "puppy", "neighbor"}
_THING = {"job", "work", "company", "project", "business", "school", "class", "course",
          "book", "game", "band", "car", "house", "home", "city", "town", "country", "store",
          "shop", "studio", "career", "degree", "tournament", "competition", "event",
          "concert", "festival", "group", "club", "charity", "campaign", "paper", "app",
          "server", "database", "account", "budget", "price", "address", "flight", "hotel"}
_PHOTO = {"photo", "pic", "picture", "here's", "check", "look", "snapped", "shot", "pics",
          "photos", "pictures"}
_THIRD = {"he", "she", "they", "his", "her", "their", "him", "them", "he's", "she's",
          "they're"}
_BYE = {"bye", "goodbye", "later", "soon", "care", "chat", "catch", "night", "ttyl", "cya"}


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("\u2019", "'"))


def split_speaker(content: str) -> tuple[str, str]:
    """``("Caroline", "text")`` for ``"Caroline: text"``; ``("", content)`` otherwise."""
    match = _SPEAKER_RE.match(content)
    if match and match.group(1) not in _NOT_SPEAKERS:
        return match.group(1), match.group(2).strip()
    return "", content.strip()


def _turn_features(text: str, names: set[str]) -> dict[str, float]:
    words = _words(text)
    n = max(len(words), 1)
    sentences = [s.strip() for s in _SENT_RE.findall(text) if s.strip()]
    questions = [s for s in sentences if s.endswith("?")]
    statements = [s for s in sentences if not s.endswith("?")]
    stated_words = [w for s in statements for w in _words(s)]
    first = sum(w in _FIRST for w in stated_words)
    # Sentences that say something: not a question, not a greeting or a reaction ("Wow, that's
    # great!"), not advice to the other speaker.
    content = []
    for s in statements:
        sw = _words(s)
        if not sw or sw[0] in _GREET or (sw[0] in _REACT and len(sw) < 8):
            continue
        if sum(w in _SECOND for w in sw) > sum(w in _FIRST for w in sw) + 0:
            continue
        content.append(sw)
    content_words = [w for sw in content for w in sw]
    caps = [c for c in _CAP_RE.findall(text) if c.lower() not in names]
    head = words[0] if words else ""
    f = {
        "bias": 1.0,
        "log_len": math.log1p(len(text)) / 6.0,
        "len_lt40": float(len(text) < 40),
        "len_40_80": float(40 <= len(text) < 80),
        "len_80_150": float(80 <= len(text) < 150),
        "len_ge150": float(len(text) >= 150),
        "sentences": min(len(sentences), 6) / 6.0,
        "ends_question": float(text.rstrip().endswith("?")),
        "only_questions": float(bool(sentences) and not statements),
        "question_share": len(questions) / max(len(sentences), 1),
        "stated_chars": min(sum(len(s) for s in statements), 300) / 300.0,
        "first_person": min(first, 6) / 6.0,
        "first_any": float(first > 0),
        "first_head": float(bool(statements) and _words(statements[0])[:1] != []
                            and _words(statements[0])[0] in _FIRST),
        "second_share": sum(w in _SECOND for w in words) / n,
        "first_share": sum(w in _FIRST for w in words) / n,
        "greet_head": float(head in _GREET),
        "react_head": float(head in _REACT),
        "time": float(any(w in _TIME for w in stated_words)),
        "year": float(bool(re.search(r"\b(19|20)\d\d\b", text))),
        "digits": float(bool(re.search(r"\d", text))),
        "plan": min(sum(w in _PLAN for w in stated_words), 3) / 3.0,
        "past": min(sum(w in _PAST for w in stated_words), 4) / 4.0,
        "past_ed": min(sum(len(w) > 4 and w.endswith("ed") for w in stated_words), 4) / 4.0,
        "pref": min(sum(w in _PREF for w in stated_words), 3) / 3.0,
        "people": min(sum(w in _PEOPLE for w in stated_words), 3) / 3.0,
        "thing": min(sum(w in _THING for w in stated_words), 3) / 3.0,
        "proper": min(len(caps), 3) / 3.0,
        "photo": float(any(w in _PHOTO for w in words)),
        "bye": float(sum(w in _BYE for w in words) >= 1 and len(text) < 100),
        "exclaim": min(text.count("!"), 3) / 3.0,
        "content_words": min(len(content_words), 40) / 40.0,
        "content_none": float(not content),
        "content_first": min(sum(any(w in _FIRST for w in sw) for sw in content), 3) / 3.0,
        "content_third": min(sum(w in _THIRD for w in content_words), 3) / 3.0,
        "content_past": min(sum(w in _PAST or (len(w) > 4 and w.endswith("ed"))
                                for w in content_words), 4) / 4.0,
        "content_time": float(any(w in _TIME for w in content_words)),
    }
    f["first_x_past"] = f["first_any"] * max(f["past"], f["past_ed"])
    f["first_x_time"] = f["first_any"] * f["time"]
    f["first_x_plan"] = f["first_any"] * f["plan"]
    f["react_x_short"] = f["react_head"] * (f["len_lt40"] + f["len_40_80"])
    f["react_x_second"] = f["react_head"] * min(f["second_share"] * 8, 1.0)
    return f


_NEIGHBOUR_KEYS = ("content_words", "first_person", "only_questions", "react_head",
                   "content_none")


def features(turns: Sequence[Turn]) -> list[dict[str, float]]:
    """Each turn's features, the turns around it included (``system`` turns have none: {})."""
    texts = [split_speaker(t.content) for t in turns]
    names = {w for name, _ in texts for w in _words(name)}
    own = [_turn_features(text, names) if t.role != "system" else {}
           for t, (_, text) in zip(turns, texts, strict=True)]
    out = []
    spoken = [i for i, t in enumerate(turns) if t.role != "system"]
    mean_len = sum(own[i]["log_len"] for i in spoken) / max(len(spoken), 1)
    mean_content = sum(own[i]["content_words"] for i in spoken) / max(len(spoken), 1)
    for pos, i in enumerate(spoken):
        f = dict(own[i])
        prev = own[spoken[pos - 1]] if pos > 0 else None
        nxt = own[spoken[pos + 1]] if pos + 1 < len(spoken) else None
        f["first_turn"] = float(pos == 0)
        f["last_turns"] = float(pos >= len(spoken) - 2)
        f["prev_question"] = prev["ends_question"] if prev else 0.0
        f["prev_question_x_first"] = f["prev_question"] * f["first_any"]
        f["next_react"] = nxt["react_head"] if nxt else 0.0
        f["next_question"] = nxt["ends_question"] if nxt else 0.0
        f["next_second"] = min(nxt["second_share"] * 8, 1.0) if nxt else 0.0
        f["prev_len"] = prev["log_len"] if prev else 0.0
        for key in _NEIGHBOUR_KEYS:
            f["prev_" + key] = prev[key] if prev else 0.0
            f["next_" + key] = nxt[key] if nxt else 0.0
        f["rel_len"] = f["log_len"] - mean_len
        f["rel_content"] = f["content_words"] - mean_content
        out.append((i, f))
    result: list[dict[str, float]] = [{} for _ in turns]
    for i, f in out:
        result[i] = f
    return result


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 30.0), -30.0)))


def scores(turns: Sequence[Turn], weights: dict[str, float] | None = None) -> list[float]:
    """Each turn's probability of stating something worth remembering (0 for ``system``)."""
    weights = extraction_weights.WEIGHTS if weights is None else weights
    return [_sigmoid(sum(weights.get(k, 0.0) * v for k, v in f.items())) if f else 0.0
            for f in features(turns)]


def bare(f: dict[str, float]) -> bool:
    """A turn that is only a question, or a short greeting, thanks or reaction with nothing
    stated: never a memory, whatever its score."""
    return bool(f["only_questions"]) or (bool(f["content_none"]) and not f["len_ge150"])


def _date(at: dt.datetime | None) -> str:
    return f"{at.day} {at:%B %Y}" if at is not None else ""


def standalone(turn: Turn, previous: Turn | None = None) -> tuple[str, str]:
    """``(content, speaker)``: the turn as a memory that stands alone, its speaker and date
    resolved; a short answer carries the question it answers."""
    speaker, text = split_speaker(turn.content)
    if not speaker:
        speaker = {"user": "User", "assistant": "Assistant"}.get(turn.role, turn.role.title())
    date = _date(turn.at)
    head = f"{speaker} ({date})" if date else speaker
    body = text
    if previous is not None and len(text) < 40:
        asked = split_speaker(previous.content)[1]
        if asked.rstrip().endswith("?") and len(asked) <= 200:
            body = f"{text} (answering: {asked})"
    content = f"{head}: {body}" if head else body
    if len(content) > MAX_CONTENT:
        content = content[:MAX_CONTENT - 1].rstrip() + "\u2026"
    return content, speaker


def extract(turns: Iterable[Turn], *, threshold: float | None = None) -> list[Candidate]:
    """The candidate memories of ``turns`` (in order): one per turn that scores at or above
    ``threshold`` (the trained one by default). ``system`` turns are never candidates."""
    turns = list(turns)
    threshold = extraction_weights.THRESHOLD if threshold is None else threshold
    weights = extraction_weights.WEIGHTS
    out = []
    for n, (turn, f) in enumerate(zip(turns, features(turns), strict=True)):
        if turn.role == "system" or not f or bare(f):
            continue
        score = _sigmoid(sum(weights.get(k, 0.0) * v for k, v in f.items()))
        if score < threshold:
            continue
        previous = next((t for t in reversed(turns[:n]) if t.role != "system"), None)
        content, speaker = standalone(turn, previous)
        out.append(Candidate(content=content, seqs=[turn.seq], type="long_term",
                             confidence=score, speaker=speaker))
    return out


def parse_text(text: str, *, at: dt.datetime | None = None) -> list[Turn]:
    """A pasted text as turns: "Speaker: text" lines (a line without a speaker continues the
    turn before it) when at least two lines name a speaker, else a note: one turn per
    sentence, spoken by ``user``. ``seq`` counts from 1."""
    lines = [line for line in text.splitlines() if line.strip()]
    spoken = [split_speaker(line) for line in lines]
    if sum(1 for name, _ in spoken if name) >= 2:
        turns: list[list[str]] = []
        for line, (name, _) in zip(lines, spoken, strict=True):
            if name or not turns:
                turns.append([line.strip()])
            else:
                turns[-1].append(line.strip())
        names: list[str] = []
        for parts in turns:
            name = split_speaker(parts[0])[0]
            if name and name not in names:
                names.append(name)
        return [Turn(seq=n, role="assistant" if names.index(split_speaker(p[0])[0] or names[0])
                     % 2 else "user", content=" ".join(p), at=at)
                for n, p in enumerate(turns, start=1)]
    sentences = [s.strip() for s in _SENT_RE.findall(text) if len(s.strip()) > 1]
    return [Turn(seq=n, role="user", content=s, at=at) for n, s in enumerate(sentences, start=1)]


def is_transcript(turns: Sequence[Turn]) -> bool:
    return any(split_speaker(t.content)[0] for t in turns)


def extract_text(text: str, *, at: dt.datetime | None = None) -> list[Candidate]:
    """The candidates of a pasted text: a transcript's as :func:`extract` picks them; a
    note's (written to be remembered) every sentence that is not a bare question, greeting
    or acknowledgement, as written."""
    turns = parse_text(text, at=at)
    if is_transcript(turns):
        return extract(turns)
    out = []
    for turn, f, score in zip(turns, features(turns), scores(turns), strict=True):
        if bare(f):
            continue
        body = turn.content.strip()
        if len(body) > MAX_CONTENT:
            body = body[:MAX_CONTENT - 1].rstrip() + "\u2026"
        out.append(Candidate(content=body, seqs=[turn.seq], confidence=max(score, 0.5)))
    return out
