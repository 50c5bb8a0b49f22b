"""The language of a text, told by its writing system (pure).

A consolidation group never mixes languages. Telling English from French would need a
language model; telling Chinese from English needs only the scripts, and that is the mix
memories of this product hold. Each Han or kana character counts as one unit (a Chinese word
is one to three characters, with no spaces), each run of letters of an alphabetic script as
one unit (a word); the script with the most units names the language. Digits, punctuation
and symbols count for nothing, so ``v2.6.0`` or an e-mail address does not make a Chinese note
English.

Labels: ``"zh"`` (Han, no kana), ``"ja"`` (kana, with or without Han), ``"ko"`` (Hangul), or
the Unicode script name in lower case (``"latin"``, ``"cyrillic"``, ``"greek"``, ...);
``""`` for a text without letters.
"""

import unicodedata
from collections import Counter
from functools import lru_cache

_IDEOGRAPHIC = {"CJK": "han", "HIRAGANA": "kana", "KATAKANA": "kana"}


@lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    """The script of one letter: the first word of its Unicode name (``LATIN``, ``CJK``,
    ``HANGUL``, ...), or ``""`` for a character that is not a letter."""
    if not ch.isalpha():
        return ""
    name = unicodedata.name(ch, "")
    if name.startswith("HALFWIDTH KATAKANA"):
        return "KATAKANA"
    if name.startswith(("FULLWIDTH LATIN", "MODIFIER LETTER")):
        return "LATIN"
    return name.split(" ", 1)[0] if name else ""


def script_units(text: str) -> Counter:
    """``{script: units}``: Han and kana characters one unit each, words of other scripts
    one unit each (``"han"``, ``"kana"``, ``"latin"``, ``"hangul"``, ...)."""
    units: Counter = Counter()
    previous = ""
    for ch in text:
        script = _script(ch)
        if script in _IDEOGRAPHIC:
            units[_IDEOGRAPHIC[script]] += 1
        elif script and script != previous:
            units[script.lower()] += 1
        previous = script
    return units


def language_of(text: str) -> str:
    """The language label of ``text`` (see the module docstring)."""
    units = script_units(text)
    if not units:
        return ""
    han, kana = units.pop("han", 0), units.pop("kana", 0)
    other, count = units.most_common(1)[0] if units else ("", 0)
    if han + kana >= count and han + kana > 0:
        return "ja" if kana else "zh"
    return {"hangul": "ko"}.get(other, other)
