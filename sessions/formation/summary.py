"""The local rolling summary: salient-first, within a budget, facts carried forward. PURE.

``summarise(previous, turns, max_chars=...)`` folds conversation turns into the summary that
came before them. It keeps the turns' sentences that carry facts (names, numbers, dates,
places, preferences, decisions, commitments, problems and their fixes) and drops greetings,
thanks, acknowledgements and system turns. Sentences are chosen greedily by the content words
they add (weighted by how often the conversation uses them, with a bonus for fact markers)
per character they cost, so the summary covers the most of the conversation's substance its
budget allows; the chosen sentences keep their order, each line naming its speaker (and its
date, when the turns have one).

Rolling: the previous summary's sentences compete with the new ones, with their weight
multiplied (``CARRY``), so its facts stay while older detail, and the new turns' chatter,
give way first.

Also here, for the benchmark and its test: ``content_words`` and ``rouge1_recall`` (ROUGE-1
recall of a reference summary's content words: the ``[a-z0-9']+`` runs of the lower-cased
text longer than one character, less ``STOPWORDS``).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["STOPWORDS", "Turn", "content_words", "rouge1_recall", "summarise"]

_WORD = re.compile(r"[a-z0-9']+")


def _wordlist(text: str) -> list[str]:
    return text.split()


STOPWORDS = frozenset(_wordlist("""
a an the and or but if then else of to in on at by for with from as into about over after
before is am are was were be been being do does did have has had having i me my mine we us
our you your he him his she her hers it its they them their this that these those what which
who whom whose when where why how all any both each few more most other some such no nor not
only own same so than too very can will just should would could shall may might must there
here up down out off again further once don doesn didn isn wasn aren weren won wouldn
shouldn couldn i'm it's that's you're i've i'll we're they're he's she's what's let's
there's don't can't didn't isn't
"""))


# A sentence ends at . ! ? followed by space, at their CJK forms, or at a line break.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])\s*|\n+")
# Runs of CJK characters (Han, kana, Hangul): weighed by their character bigrams.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
# "Name: text" at the start of a message: the speaker named inside the content.
_SPEAKER_PREFIX = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,3}):\s+(?=\S)")
# A summary line as this module writes it: "Speaker (8 May 2023): text" or "Speaker: text".
_LINE = re.compile(r"^([^:()\n]{1,60}?)(?: \(([^()\n]{1,40})\))?: (.+)$")

# Openers that carry nothing: interjections and pleasantries before the substance.
_FILLER = re.compile(
    r"^(?:(?:hey|hi|hello|oh|ah|aw+|wow|whoa|yeah|yes|yep|no|nope|ok|okay|sure|well|so|haha+|"
    r"lol|hmm+|um+|uh|thanks|thank you|cool|great|awesome|nice|right|indeed|totally|"
    r"absolutely|definitely|of course|good to see you|good to hear|glad to hear(?: that)?|"
    r"that'?s (?:great|awesome|amazing|cool|nice|so cool|wonderful|fantastic)|"
    r"sounds (?:good|great)|got it|i see)\b[\s,!.:;-]*)+",
    re.IGNORECASE)
# A whole sentence that is only a greeting, thanks, farewell or acknowledgement.
_SMALL_TALK = re.compile(
    r"^(?:hi|hey|hello|good (?:morning|afternoon|evening)|thanks?|thank you|cheers|ok|okay|"
    r"sure|got it|great|cool|nice|awesome|bye|goodbye|see you|take care|talk (?:to you )?soon|"
    r"you're welcome|no problem|sounds good|will do|noted|perfect|welcome|how are you|"
    r"how have you been|how's it going|what's up)\b",
    re.IGNORECASE)

_CJK_SMALL_TALK = re.compile(
    r"^(?:你好|您好|谢谢|多谢|感谢|好的|好吧|没问题|再见|不客气|ありがとう|こんにちは|"
    r"안녕하세요|감사합니다)|^.{0,4}(?:你好|您好)[！!。]?$")
_CJK_FILLER = re.compile(r"^(?:(?:你好|您好|嗯|哦|好的|是的)[，,！!、\s]+)+")

_MONTHS = _wordlist("january february march april may june july august september october november "
           "december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday "
           "thursday friday saturday sunday yesterday today tomorrow tonight week weekend month "
           "year")
_MARKERS = {w: 1.0 for w in _MONTHS}
# Preferences, decisions, commitments, problems and their fixes, self-disclosure.
for _w in _wordlist("love loves loved like likes prefer prefers preferred favorite favourite hate hates "
           "allergic allergy vegetarian vegan enjoy enjoys passionate dream "
           "decided decide decision chose choose plan plans planning planned going will "
           "promise agreed agree booked book scheduled deadline budget cost price paid "
           "problem issue error bug broken broke fails failed failing crash fix fixed solved "
           "resolved workaround cause because started finished moved live lives born work "
           "works job name called married kids son daughter wife husband family friend "
           "adopted bought new"):
    _MARKERS[_w] = 0.6

CARRY = 2.0          # weight of a sentence already in the previous summary
QUESTION = 0.5       # a question states less than an answer
MAX_SENTENCE = 400   # characters of one sentence kept at most


@dataclass(frozen=True)
class Turn:
    """One conversation turn: ``role`` (user, assistant, system, tool), the ``speaker``'s
    name when known, its ``text`` and when it was said (``at``)."""

    role: str
    text: str
    speaker: str | None = None
    at: dt.datetime | None = None


@dataclass
class _Unit:
    speaker: str
    date: str
    text: str
    words: list[str]
    order: tuple[int, int]
    carried: bool
    bonus: float


def content_words(text: str) -> list[str]:
    """The ``[a-z0-9']+`` runs of the lower-cased text longer than one character, less the
    stopwords."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS]


def _terms(text: str) -> list[str]:
    """What a sentence is weighed by: its content words, and the character bigrams of its
    CJK runs (a one-character run counts as itself), so Chinese, Japanese and Korean turns
    are summarised too."""
    terms = content_words(text)
    for run in _CJK.findall(text):
        terms += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
    return terms


def rouge1_recall(reference: str, candidate: str) -> float:
    """ROUGE-1 recall of ``reference``'s content words in ``candidate`` (counts clipped)."""
    ref, cand = Counter(content_words(reference)), Counter(content_words(candidate))
    total = sum(ref.values())
    return sum(min(n, cand[w]) for w, n in ref.items()) / total if total else 0.0


def _date(at: dt.datetime | None) -> str:
    return f"{at.day} {at:%B %Y}" if at is not None else ""


def _speaker(turn: Turn) -> tuple[str, str]:
    """The turn's speaker and its text without a leading ``Name:`` that named them."""
    text = turn.text
    if turn.speaker:
        return turn.speaker, text
    match = _SPEAKER_PREFIX.match(text)
    if match:
        return match.group(1), text[match.end():]
    return (turn.role or "user").capitalize(), text


def _clean(sentence: str) -> str:
    """The sentence without the interjections it opens with; "" when nothing is left."""
    sentence = " ".join(sentence.split())
    rest = _CJK_FILLER.sub("", _FILLER.sub("", sentence)).strip(" ,;:-")
    if rest and rest != sentence:
        rest = rest[0].upper() + rest[1:]
    return rest[:MAX_SENTENCE]


def _bonus(sentence: str) -> float:
    """Fact markers: numbers, names (capitalised words inside the sentence), dates, money,
    preferences, decisions, commitments, problems and fixes."""
    bonus = 0.0
    if re.search(r"\d", sentence):
        bonus += 1.5
    if re.search(r"[€$£¥%]", sentence):
        bonus += 1.0
    tokens = sentence.split()
    bonus += 0.7 * min(3, sum(1 for t in tokens[1:] if t[:1].isupper() and t[1:2].islower()))
    bonus += min(2.0, sum(_MARKERS.get(w, 0.0) for w in set(_WORD.findall(sentence.lower()))))
    if re.search(r"\b(?:i'm|i am|my|i've|i have|we're|we are|our|i'll|i will)\b", sentence,
                 re.IGNORECASE):
        bonus += 0.5
    return bonus


def _units(previous: str, turns: list[Turn]) -> list[_Unit]:
    units: list[_Unit] = []
    for n, line in enumerate(x for x in previous.splitlines() if x.strip()):
        match = _LINE.match(line.strip())
        speaker, date, text = match.groups() if match else ("", "", line.strip())
        for m, sentence in enumerate(s for s in _SENTENCE.split(text) if s.strip()):
            sentence = " ".join(sentence.split())
            units.append(_Unit(speaker, date or "", sentence, _terms(sentence),
                               (-1, n * 1000 + m), True, _bonus(sentence)))
    for n, turn in enumerate(turns):
        if turn.role == "system":
            continue
        speaker, text = _speaker(turn)
        date = _date(turn.at)
        for m, raw in enumerate(s for s in _SENTENCE.split(text) if s.strip()):
            sentence = _clean(raw)
            words = _terms(sentence)
            bonus = _bonus(sentence)
            if (len(words) < 2 or (len(words) < 3 and bonus < 1.5)
                    or (_SMALL_TALK.match(sentence) and len(words) < 4)
                    or (_CJK_SMALL_TALK.match(sentence) and len(sentence) <= 12)):
                continue
            units.append(_Unit(speaker, date, sentence, words, (n, m), False, bonus))
    return units


def _render(chosen: list[_Unit]) -> str:
    lines: list[list] = []
    last_date = ""
    for unit in sorted(chosen, key=lambda u: u.order):
        if lines and lines[-1][0] == unit.speaker and lines[-1][1] in ("", unit.date):
            lines[-1][2].append(unit.text)
            continue
        date = unit.date if unit.date and unit.date != last_date else ""
        last_date = unit.date or last_date
        lines.append([unit.speaker, date, [unit.text]])
    out = []
    for speaker, date, texts in lines:
        head = f"{speaker} ({date})" if date else speaker
        body = texts[0]
        for text in texts[1:]:  # no space after a CJK sentence's full stop
            body += text if body.endswith(("。", "！", "？", "；")) else " " + text
        out.append(f"{head}: {body}" if head else body)
    return "\n".join(out)


def summarise(previous: str, turns: list[Turn], *, max_chars: int) -> str:
    """The rolling summary of ``previous`` (a summary this function wrote, or any text)
    followed by ``turns``, at most ``max_chars`` characters."""
    if max_chars <= 0:
        return ""
    units = _units(previous or "", turns)
    if not units:
        return ""
    # How much the conversation talks about each word: its topics weigh more.
    frequency = Counter(w for u in units for w in u.words)
    weight = {w: 1.0 + math.log(n) for w, n in frequency.items()}
    chosen: list[_Unit] = []
    covered: set[str] = set()
    remaining = list(units)
    while remaining:
        best, best_gain = None, 0.0
        for unit in remaining:
            fresh = {w for w in unit.words if w not in covered}
            if not fresh:
                continue
            gain = sum(weight[w] for w in fresh) + unit.bonus
            if unit.text.endswith(("?", "？")):
                gain *= QUESTION
            if unit.carried:
                gain *= CARRY
            gain /= len(unit.text) + 8
            if gain > best_gain:
                best, best_gain = unit, gain
        if best is None:
            break
        remaining.remove(best)
        if len(_render([*chosen, best])) <= max_chars:
            chosen.append(best)
            covered.update(best.words)
    text = _render(chosen)
    return text if len(text) <= max_chars else text[:max_chars].rstrip()
