"""Statement frames: a clause with its quantity-like values masked.

"The build takes 12 minutes" and "The build takes 20 minutes now" share the frame
"frame:the build takes #" with values "12 minutes" / "20 minutes". Only stative clauses
(a copula: is/are/costs/是/为) make a frame: "Omar ran 10 km on Monday" and "… 12 km on
Tuesday" are two events, both true.
"""

import re

from memories.supersession import cues, values
from memories.supersession.fact import Fact

_STATIVE_EN = re.compile(r"\b(?:is|are|costs|equals)\b", re.I)
_STATIVE_ZH = re.compile(r"是|为")
# Change words and fillers that a newer statement adds around the same frame.
_NOISE_EN = re.compile(r"\b(?:now|currently|still|again|also|the|a|an)\b", re.I)
_NOISE_ZH = re.compile(r"现在|目前|已经|仍然|还是|也|又|的")
MAX_SLOT = 200
# Every value QUANTITY masks has a digit, a month or weekday name, "every" or a Chinese date word.
_HINT = re.compile(r"\d|every|noon|midnight|每|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|day\b")


def frame(clause: str) -> Fact | None:
    """Fact(slot 'frame:<masked text>', value 'v1 / v2') or None when no value or not stative."""
    chinese = cues.is_chinese(clause)
    verb = (_STATIVE_ZH if chinese else _STATIVE_EN).search(clause)
    if not verb or not _HINT.search(clause.lower()):
        return None
    # Only the predicate's values are masked: numbers before the verb name the thing
    # ("Day 1 of the summit is on May 3" is not the frame of "Day 2 … is on May 4").
    head, tail = clause[: verb.end()], clause[verb.end():]
    found = [m.group(0).strip() for m in values.QUANTITY.finditer(tail) if m.group(0).strip()]
    found = [v for v in found if any(ch.isdigit() for ch in v) or len(v) > 3]
    if not found:
        return None
    masked = head + values.QUANTITY.sub(lambda m: " # " if m.group(0).strip() in found else m.group(0),
                                        tail)
    masked = (_NOISE_ZH if chinese else _NOISE_EN).sub(" ", masked.lower())
    masked = " ".join(re.sub(r"[^\w#\s-]", " ", masked).split())
    residue = re.sub(r"[#\s]|\b(?:is|are|costs|equals)\b|是|为", "", masked)
    if len(residue) < 4:
        return None
    value = " / ".join(" ".join(v.lower().split()) for v in found)
    return Fact(f"frame:{masked}"[:MAX_SLOT], value)
