"""Sentence-level cues: clause splitting, questions, hedges and plans, change words.

Rules come from the product issue: a question or a hedged/planned statement asserts no current
fact ("Does Chloe still live in Dublin?", "might move next year", "考虑明年搬家"); change words
("moved", "no longer", "改为", "不再") are evidence that an older value ended.
"""

import re

_CJK = re.compile(r"[\u4e00-\u9fff]")

# Clause boundaries. English commas split only when followed by a space so "1,000" survives.
_CLAUSE_SPLIT = re.compile(r"(?<=[?？])|\.(?=\s|$)\s*|[;!。；！，]\s*|,\s+|\s+but\s+|\s+so\s+")
# Parenthesised asides ("TICKET-482 (login loop on Safari)") describe, they do not state.
_ASIDE = re.compile(r"\s*[（(][^）)]*[）)]")
_LEADING_CONJUNCTION = re.compile(r"^(?:and|so|but|then|also|note:|update:|fyi:?)\s+", re.I)

# Matched on the lowercased clause (case-insensitive patterns are several times slower).
_QUESTION_EN = re.compile(
    r"\?\s*$|^(?:does|do|did|is|are|was|were|can|could|should|has|have|who|what|where|when|why|how)\b")
_QUESTION_ZH = re.compile(r"[吗呢？?]\s*$|是否|有没有|是不是")

# Not yet a fact: modal or future verbs, intentions, conditions (on the lowercased clause).
_HEDGE_EN = re.compile(
    r"\b(?:might|could|would|will|shall|maybe|perhaps|probably|considering|thinking (?:about|of)"
    r"|plans? to|planning|going to|hopes? to|wants? to|intends? to|if|unless|next (?:year|month|week))\b")
# "may" is a hedge in lowercase only: "May 14" is a date.
_MAY = re.compile(r"\bmay\b")
_HEDGE_ZH = re.compile(r"可能|也许|或许|考虑|打算|计划|准备|想要|如果|假如|明年|下个月|将会|将要|要不要|会不会")

CHANGE_WORDS_EN = (
    "moved", "relocated", "now", "no longer", "anymore", "switched", "changed", "reassigned",
    "replaced", "raised", "lowered", "increased", "reduced", "decreased", "pushed", "rescheduled",
    "postponed", "rolled out", "rolled back", "upgraded", "downgraded", "these days",
    "from now on", "instead", "updated", "took over", "handed", "swapped", "again", "new",
    "covers", "stopped", "quit", "reverted", "restored", "bumped",
)
CHANGE_WORDS_ZH = (
    "改为", "改成", "改到", "改由", "换成", "换了", "换到", "搬到", "搬去", "搬家", "现在", "不再",
    "已经", "升级", "涨价", "降价", "调整", "恢复", "转给", "以后", "最近", "又", "不要再", "更换",
    "改期", "推迟", "提前",
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CHANGE_SINGLE = frozenset(w for w in CHANGE_WORDS_EN if " " not in w)
_CHANGE_PHRASES = tuple(w for w in CHANGE_WORDS_EN if " " in w)


def is_chinese(text: str) -> bool:
    """True when the text holds any CJK ideograph (Chinese rules then apply)."""
    return bool(_CJK.search(text))


def clauses(text: str) -> list[str]:
    """The clauses of a text, asides removed, questions and hedged clauses dropped."""
    kept = []
    for raw in _CLAUSE_SPLIT.split(_ASIDE.sub("", text)):
        clause = _LEADING_CONJUNCTION.sub("", (raw or "").strip())
        if not clause:
            continue
        if is_chinese(clause):
            if _QUESTION_ZH.search(clause) or _HEDGE_ZH.search(clause):
                continue
        elif _MAY.search(clause) or _QUESTION_EN.search(lower := clause.lower()) or _HEDGE_EN.search(lower):
            continue
        kept.append(clause)
    return kept


def change_words(text: str) -> tuple[str, ...]:
    """The change words of a text, lowercased: English words in order of appearance, then
    English phrases and Chinese words in list order."""
    lower = text.lower()
    found = [w for w in _WORD.findall(lower) if w in _CHANGE_SINGLE]
    found += [w for w in _CHANGE_PHRASES if w in lower]
    if is_chinese(text):
        found += [w for w in CHANGE_WORDS_ZH if w in text]
    return tuple(dict.fromkeys(found))
