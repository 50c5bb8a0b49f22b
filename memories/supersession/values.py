"""Values: the quantity-like expressions a statement frame masks, and value normalisation.

Shapes: every function takes and returns `str`. Normalised values are lowercased, trimmed of
trailing punctuation; phone numbers keep "+" and digits grouped by single spaces.
"""

import re

MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_CLOCK = r"\d{1,2}(?::\d\d)?\s*(?:am|pm)|noon|midnight"
_UNIT = (r"%|ms|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?|kb|mb|gb|tb"
         r"|gib|mib|k|x|requests|req|rps|users?|seats?|connections?|nodes?|items?")

VERSION = r"v\d+(?:\.\d+)*(?:-[\w.]+)?|\d+\.\d+(?:\.\d+)*(?:-[\w.]+)?"
MONEY = r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s*(?:per|a|/)\s*(?:month|year|user|seat|mo|yr))?"
PHONE = r"\+?\d[\d\s-]{6,}\d(?:,?\s*ext\.?\s*\d+)?"
DATE_EN = (rf"{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:\s+at\s+(?:{_CLOCK}))?"
           rf"|(?:every\s+)?{WEEKDAY}s?(?:\s+(?:morning|afternoon|evening|at\s+(?:{_CLOCK})))*"
           rf"|every\s+(?:day|morning|evening|night|week|month|year|weekday)"
           rf"|{_CLOCK}")
NUMBER_EN = rf"\d[\d,]*(?:\.\d+)?\s*(?:{_UNIT})?\b"

# Chinese dates, schedules and numbers with units ("4 月 18 日下午两点", "每周一上午", "30 秒").
_ZH_NUM = r"[\d一二两三四五六七八九十百千万]+"
DATE_ZH = (rf"{_ZH_NUM}\s*月\s*{_ZH_NUM}\s*[日号](?:\s*[上下]午\s*{_ZH_NUM}\s*点半?)?"
           r"|每(?:个)?(?:周|星期|礼拜)[一二三四五六日天末](?:[上下]午|早上|晚上)?"
           r"|每(?:天|日|月|年|晚)")
# A number with a Chinese unit (the unit is required: a bare number is NUMBER_EN's).
NUMBER_ZH = (r"[¥￥]?\s*\d[\d,]*(?:\.\d+)?\s*(?:毫秒|秒|分钟|小时|天|周|个月|月|年|次|个|人|台|条|元|块)")

# Any value a statement frame masks; not inside identifiers ("TICKET-482", "Q2").
QUANTITY = re.compile(
    rf"(?<![\w-])(?:{MONEY}|{PHONE}|{VERSION}|{DATE_EN}|{DATE_ZH}|{NUMBER_ZH}|{NUMBER_EN})", re.I)

_PHONE_FULL = re.compile(rf"^{PHONE}$")
_TRAILING = re.compile(r"[\s,.;:!?，。；：！？、]+$")
_CUT_EN = re.compile(
    r",|\s+-\s+|\s+(?:because|after|since|until|before|when|while|for|with|from|near|close to|"
    r"next to|by|in the|at the|this|last|who|which|and|but|so|instead)\b", re.I)
_LEADING_PREP = re.compile(r"^(?:on|at|in|to|the|a|an)\s+", re.I)
_CUT_ZH = re.compile(r"[，。；,;]|因为|之后|以后|附近|一带|了$")


def is_phone(value: str) -> bool:
    return bool(_PHONE_FULL.match(value.strip())) and sum(c.isdigit() for c in value) >= 7


def phone(value: str) -> str:
    """'+44 7700-900 123' -> '+447700900123' (compared on digits, ext. kept)."""
    return re.sub(r"[^\d+]", "", value.split("ext")[0])


def clean_en(value: str, max_words: int = 5) -> str:
    """A stated English value: the first phrase up to a comma or a linking word, lowercased.

    A value starting with a capital (a name or a place) keeps its run of capitalised words.
    """
    value = value.strip()
    if is_phone(value):
        return phone(value)
    value = _LEADING_PREP.sub("", value)
    if value[:1].isupper():
        run = re.match(r"[A-Z][\w&'.-]*(?:\s+(?:[A-Z][\w&'.-]*|of|de|la|&))*", value)
        if run:
            return _TRAILING.sub("", run.group(0)).lower()
    value = _CUT_EN.split(value, maxsplit=1)[0]
    return _TRAILING.sub("", " ".join(value.split()[:max_words])).lower()


def clean_zh(value: str) -> str:
    """A stated Chinese value: up to the first clause boundary or linking word, spaces removed."""
    value = value.strip()
    if is_phone(value):
        return phone(value)
    value = _CUT_ZH.split(value, maxsplit=1)[0]
    return _TRAILING.sub("", re.sub(r"\s+", "", value)).lower()


def same_value(a: str, b: str) -> bool:
    """Same, refining or cumulative values ('porto' vs 'porto riverside', '6月12日' vs '6月12日上午')
    are not a change: one containing the other reads as a paraphrase or a detail."""
    a, b = sorted((a.strip(), b.strip()), key=len)
    if a.replace(" ", "") == b.replace(" ", ""):
        return True
    if a.startswith("eats ") and b.startswith("eats "):
        # "eats fish" and "eats chicken" add up; only a label (vegan, vegetarian) excludes them.
        return True
    if len(a) < 2:
        return False
    if re.match(r"[\d$€£¥+]|v\d", a):
        # '$49' is not a detail of '$490': numbers must match whole.
        return bool(re.search(rf"(?<![\w.]){re.escape(a)}(?![\w.])", b))
    return a in b
