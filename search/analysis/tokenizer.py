"""Text analysis for the memory index: normalisation, tokens, stopwords, stems.

Pure Python (no Django, no Redis). The same analyzer must be used at ingest
and at query time, otherwise query terms will not match indexed terms.

Pipeline of :func:`tokenize` (one token per occurrence, in text order):

1. :func:`normalize` -- Unicode NFKC, then ``str.casefold``. NFKC folds
   full-width forms to ASCII ("ＶＩＰ" -> "VIP") and half-width katakana to
   full-width; casefold lower-cases ("VIP" -> "vip", "Straße" -> "strasse").
2. Split into runs with one precompiled regex:

   * Chinese dates, the month and day as one token: "4月27号" and "4月27日" ->
     "4月27日" (号 and 日 are one unit; leading zeros dropped), "2025年3月" ->
     "2025", "2025年", "3月"; "2025年4月27日" -> "2025", "2025年", "4月27日" (the
     year apart, so a question naming only the day still matches, and bare too).
   * A number glued to a unit (:data:`NUMBER_UNITS`) or to 日 / 号: the number as
     if it stood alone, then glued to its unit, and the unit starts the CJK run
     after it: "１０２周三" -> "102", "102周", "周三"; "3.5元" -> "3", "5", "3.5元",
     "元"; "27号" -> "27", "27号", "号". A query of "102", "１０２" or "102周"
     finds it, and "102周三" holds every token "102 周三" does. A number glued to
     other CJK ("102호", "3つ") is a word run already: "102", "호".
   * CJK runs (Han, Hiragana, Katakana, Hangul) -> see step 3.
   * Other word runs: ``\\w`` minus underscore minus CJK, so letters of any
     script and digits ("x1234567", "2026", "world123"). Underscores,
     hyphens, dots, apostrophes split words. A trailing possessive "'s" /
     "’s" is dropped ("caroline's" -> "caroline"); other apostrophes split
     ("don't" -> "don", "t", both English stopwords).
   * Everything else -- whitespace, ASCII and full-width punctuation
     ("？", "，", "。"), emoji, symbols -- produces no token. No "" token is
     ever emitted.

3. CJK runs, ``cjk="bigram"`` (default): overlapping bigrams as Lucene's
   CJKBigramFilter does ("杭州出差" -> "杭州", "州出", "出差"); a run of one
   character stays a unigram. A CJK run glued to Latin ("VIP会员") is its own
   run ("vip", "会员"). ``cjk="jieba"``: the run is segmented with
   ``jieba.lcut_for_search`` instead (imported lazily; optional).
4. ``stopwords=True`` drops English stopwords (NLTK's English list, see
   :data:`ENGLISH_STOPWORDS`), CJK unigrams in :data:`CJK_STOPWORDS`, CJK
   bigrams / jieba words in :data:`CJK_STOPWORD_BIGRAMS`, and (bigram mode)
   every bigram that holds a function character (``search.analysis.cjk_words``:
   的 了 我 们 在 ...) unless that bigram is itself a word: "号我", "们聊", "我明"
   straddle two words and go; "我国", "现在", "了解" stay.
5. ``stemming=True`` applies the Snowball English stemmer to tokens that
   contain a Latin letter ("running" -> "run"); digits-only tokens and CJK
   tokens are never stemmed. Stopwords are removed before stemming (as in
   Lucene's EnglishAnalyzer: StopFilter runs before the stemmer).

Known limitation: combining marks that Python's ``\\w`` does not match (e.g.
Devanagari vowel signs) split words; Latin accents are fine because NFKC
composes them. Thai/Lao/Khmer runs (no spaces) become one token per run.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from search.analysis.cjk_words import FUNCTION_CHAR_WORDS, FUNCTION_CHARS

__all__ = [
    "CJK_STOPWORDS",
    "CJK_STOPWORD_BIGRAMS",
    "DEFAULT_ANALYZER",
    "ENGLISH_STOPWORDS",
    "NUMBER_UNITS",
    "Analyzer",
    "CjkMode",
    "normalize",
    "stem",
    "tokenize",
]

CjkMode = Literal["bigram", "jieba"]
_CJK_MODES = frozenset({"bigram", "jieba"})

# NLTK's English stopword list (179 words), minus the 26 forms that contain an
# apostrophe ("don't", "should've", ...): tokens never contain apostrophes, and
# the split halves ("don", "t", "ve", "ll", ...) are in the list already.
# fmt: off
ENGLISH_STOPWORDS: frozenset[str] = frozenset([
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
    "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers",
    "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves",
    "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are",
    "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does",
    "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until",
    "while", "of", "at", "by", "for", "with", "about", "against", "between", "into",
    "through", "during", "before", "after", "above", "below", "to", "from", "up", "down",
    "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here",
    "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
    "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so",
    "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now", "d",
    "ll", "m", "o", "re", "ve", "y", "ain", "aren", "couldn", "didn", "doesn", "hadn",
    "hasn", "haven", "isn", "ma", "mightn", "mustn", "needn", "shan", "shouldn", "wasn",
    "weren", "won", "wouldn",
])
# fmt: on

# Common Chinese function characters. Only dropped when a CJK run is a single
# character (a unigram token) or, in jieba mode, a one-character word.
# fmt: off
CJK_STOPWORDS: frozenset[str] = frozenset([
    "的", "了", "是", "在", "我", "你", "他", "她", "它", "们", "这", "那", "和", "与", "就", "都", "也",
    "要", "吗", "呢", "吧", "啊", "着", "过", "把", "被", "之", "而", "及", "或", "么", "哦", "嗯", "呀",
])
# fmt: on

# Chinese function words of two characters, dropped as whole bigram tokens
# (and as jieba words). Kept deliberately small and explicit.
# fmt: off
CJK_STOPWORD_BIGRAMS: frozenset[str] = frozenset([
    "我们", "你们", "他们", "她们", "它们", "这个", "那个", "这些", "那些", "什么", "怎么", "因为", "所以", "但是",
    "而且", "如果", "就是", "还是", "可以", "没有", "已经", "一个", "自己",
])
# fmt: on

# Han (BMP + Ext A + compatibility + supplementary planes), Hiragana letters
# and iteration marks, Katakana (without the "・" middle dot U+30FB and the
# "゠" U+30A0 punctuation), Katakana phonetic extensions, Hangul jamo,
# compatibility jamo and syllables. CJK punctuation (U+3000-U+303F) and
# full-width forms are deliberately absent.
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3041-\u3096\u309d-\u309f"  # Hiragana
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana (incl. prolonged sound mark ー)
    "\u3131-\u318e"  # Hangul Compatibility Jamo
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7af"  # Hangul Syllables
    "\ud7b0-\ud7ff"  # Hangul Jamo Extended-B
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0003134f"  # CJK Unified Ideographs Extensions B-G
)

# Chinese units that also give a token glued to the number before them ("3天", "18岁").
NUMBER_UNITS = "岁天周元块次点"

# Group 1: a Chinese date (see _date_tokens). Groups 2 and 3: a number (decimals included)
# and the unit or day character after it, which the match leaves in place: it starts the
# CJK run that follows (see _number_tokens). Group 4: a CJK run. Group 5: a non-CJK word
# run ([^\W_] = word chars minus "_"), optionally followed by a possessive 's that is
# consumed but not kept. Dates and numbers count only when no letter or digit is glued
# before them ("x10月" is a word and a character), and a number not after "<digit>." either
# (in "1.2.3元" no "2.3元": the whole is no number).
_NOT_AFTER_A_WORD = rf"(?<![^\W_{_CJK_CLASS}])"
_TOKEN_RE = re.compile(
    rf"{_NOT_AFTER_A_WORD}("
    r"\d{1,4}年(?:\d{1,2}月(?:\d{1,2}[日号])?)?"
    r"|\d{1,2}月(?:\d{1,2}[日号])?"
    r")"
    rf"|{_NOT_AFTER_A_WORD}(?<!\d\.)(\d+(?:\.\d+)?)(?=([日号{NUMBER_UNITS}]))"
    rf"|([{_CJK_CLASS}]+)"
    rf"|([^\W_{_CJK_CLASS}]+)(?:['\u2019]s(?![^\W_{_CJK_CLASS}]))?"
)
_DATE_PARTS_RE = re.compile(r"(?:(\d+)年)?(?:(\d+)月)?(?:(\d+)[日号])?")

# A token is stemmed only if it has a Latin letter (ASCII or Latin-1/Extended).
_LATIN_LETTER_RE = re.compile("[a-z\u00df-\u00f6\u00f8-\u024f]")


def normalize(text: str) -> str:
    """Return ``text`` in NFKC form, case-folded.

    Full-width ASCII becomes ASCII ("ＨＥＬＬＯ" -> "hello"), ligatures are
    expanded ("ﬁ" -> "fi"), and all letters are case-folded.
    """
    return unicodedata.normalize("NFKC", text).casefold()


_stemmers = threading.local()


def _english_stemmer():
    """This thread's Snowball English stemmer (PyStemmer-backed if present). One per thread:
    a stemmer keeps the word it works on in itself, so two threads sharing one (gunicorn's
    threads, a recall beside a write) corrupt each other's stems or raise IndexError."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Stem one word with Snowball English if it contains a Latin letter."""
    if _LATIN_LETTER_RE.search(word) is None:
        return word
    return _english_stemmer().stemWord(word)


def stem(word: str) -> str:
    """The stem a ``stemming=True`` analyzer gives the token ``word`` of an unstemmed one
    (tokens without a Latin letter, such as numbers, dates and CJK, are left as they are)."""
    return _stem(word)


def _date_tokens(text: str) -> list[str]:
    """"4月27号" -> ["4月27日"]; "2025年3月" -> ["2025", "2025年", "3月"].

    The year is also indexed bare, as a number glued to its unit is (a query "2025" finds
    "2025年"); a month and day stay inside their one token: a bare "4" or "27" would match
    every 4 and 27.
    """
    year, month, day = _DATE_PARTS_RE.fullmatch(text).groups()
    out = [year, f"{int(year)}年"] if year else []
    if month:
        out.append(f"{int(month)}月{int(day)}日" if day else f"{int(month)}月")
    return out


def _number_tokens(number: str, unit: str) -> list[str]:
    """"102" before "周" -> ["102", "102周"]; "3.5" before "元" -> ["3", "5", "3.5元"].

    First the number's tokens as if it stood alone (the dot splits it, as it splits every
    word), so a query of the bare number finds it; then the number glued to its unit, leading
    zeros dropped ("007天" -> "7天"), so a query naming the unit prefers it. The unit itself
    is left to the CJK run after it ("102周三" also gives "周三").
    """
    whole, _, fraction = number.partition(".")
    # lstrip, not int(): a number may be longer than int() converts (4300 digits).
    glued = (whole.lstrip("0") or "0") + (f".{fraction}" if fraction else "") + unit
    return [whole, fraction, glued] if fraction else [whole, glued]


def _is_cross_word(gram: str) -> bool:
    """A bigram with a function character that is not itself a word ("号我", "们聊")."""
    return (gram[0] in FUNCTION_CHARS or gram[1] in FUNCTION_CHARS) and (
        gram not in FUNCTION_CHAR_WORDS
    )


def _cjk_bigrams(run: str, stopwords: bool) -> list[str]:
    """Split a CJK run into overlapping bigrams (Lucene's CJKBigramFilter).

    "杭州出差" -> ["杭州", "州出", "出差"]; a one-character run stays a
    unigram. With ``stopwords``, unigrams in :data:`CJK_STOPWORDS`, bigrams
    in :data:`CJK_STOPWORD_BIGRAMS` and cross-word bigrams of a function
    character (:func:`_is_cross_word`) are dropped; a content character that
    no kept bigram covers is then kept as a unigram ("我们聊了" -> ["聊"]).
    """
    if len(run) == 1:
        if stopwords and run in CJK_STOPWORDS:
            return []
        return [run]
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    if not stopwords:
        return grams
    # Keep every content character findable: one that no kept bigram covers (聊 in
    # "们聊了") becomes a unigram at its place.
    out: list[tuple[int, str]] = []
    covered = [False] * len(run)
    for i, gram in enumerate(grams):
        if gram in CJK_STOPWORD_BIGRAMS:
            covered[i] = covered[i + 1] = True
        elif not _is_cross_word(gram):
            out.append((i, gram))
            covered[i] = covered[i + 1] = True
    for i, ch in enumerate(run):
        if not covered[i] and ch not in FUNCTION_CHARS and ch not in CJK_STOPWORDS:
            out.append((i, ch))
    out.sort()
    return [token for _, token in out]


@lru_cache(maxsize=1)
def _jieba():
    """Import jieba lazily (slow; optional dependency) and silence its logger."""
    import jieba

    jieba.setLogLevel(60)
    return jieba


def _cjk_jieba(run: str, stopwords: bool) -> list[str]:
    """Segment a CJK run with ``jieba.lcut_for_search``.

    Search mode also emits the shorter words inside long words. Blank pieces
    and, with ``stopwords``, CJK stopwords (one- or two-character) are dropped.
    """
    words = [w for w in _jieba().lcut_for_search(run) if w.strip()]
    if stopwords:
        return [w for w in words if w not in CJK_STOPWORDS and w not in CJK_STOPWORD_BIGRAMS]
    return words


def tokenize(
    text: str,
    *,
    stemming: bool = False,
    stopwords: bool = True,
    cjk: CjkMode = "bigram",
) -> list[str]:
    """Return the index tokens of ``text``, one per occurrence, in order.

    >>> tokenize("请问VIP会员怎么续费？")
    ['请问', 'vip', '会员', '员怎', '么续', '续费']
    >>> tokenize("Caroline's plants need water every 3 days", stemming=True)
    ['carolin', 'plant', 'need', 'water', 'everi', '3', 'day']

    See the module docstring for the exact rules. Raises ``ValueError`` for an
    unknown ``cjk`` mode.
    """
    if cjk not in _CJK_MODES:
        raise ValueError(f"cjk must be 'bigram' or 'jieba', not {cjk!r}")
    split_cjk = _cjk_bigrams if cjk == "bigram" else _cjk_jieba
    out: list[str] = []
    append = out.append
    for date, number, unit, cjk_run, word in _TOKEN_RE.findall(normalize(text)):
        if date:
            out.extend(_date_tokens(date))
        elif number:
            out.extend(_number_tokens(number, unit))
        elif word:
            if stopwords and word in ENGLISH_STOPWORDS:
                continue
            append(_stem(word) if stemming else word)
        else:
            out.extend(split_cjk(cjk_run, stopwords))
    return out


@dataclass(frozen=True, slots=True)
class Analyzer:
    """A fixed tokenizer configuration; use the same one to index and query."""

    stemming: bool = False
    stopwords: bool = True
    cjk: CjkMode = "bigram"

    def __post_init__(self) -> None:
        """Reject unknown CJK modes early rather than at first use."""
        if self.cjk not in _CJK_MODES:
            raise ValueError(f"cjk must be 'bigram' or 'jieba', not {self.cjk!r}")

    def tokens(self, text: str) -> list[str]:
        """Return :func:`tokenize` of ``text`` with this configuration."""
        return tokenize(text, stemming=self.stemming, stopwords=self.stopwords, cjk=self.cjk)

    def term_frequencies(self, text: str) -> dict[str, int]:
        """Return ``{token: count}`` for ``text`` (the document's tf vector)."""
        return dict(Counter(self.tokens(text)))


DEFAULT_ANALYZER = Analyzer(stemming=False, stopwords=True, cjk="bigram")
