"""The text of a merged memory (pure): every source's wording kept byte for byte.

:func:`merge_texts` starts from the longest source (the earliest of equals) and appends, in
source order, each sentence of the other sources that the text does not hold yet. Nothing is
re-tokenised or re-punctuated: ``v2.6.0`` and ``no-reply@mail.harbor.example`` come out as they
went in, because sentences are cut only at a ``.``/``!``/``?`` followed by white space or the
end, at ``。！？；`` or at a line break, and are copied as they are.

"Holds" (:func:`holds`) compares after NFKC, case folding and collapsing white space, ignoring
the sentence's own closing punctuation, and only at word boundaries (a Latin or digit edge
must not touch another letter or digit), so every token the index makes of a skipped
sentence is among the tokens of the merged text: each source stays findable by its words.

Near-identical sentences are kept once (:func:`near_identical`): two sources often note the
same fact in slightly different words ("Password reset emails come from X since the fix." /
"Password reset emails now come from X after the fix."). Compared without case, punctuation
and white space, a sentence whose words another one holds in a row, or that words it almost
the same way while naming the same things (numbers, names, addresses: ``entities.extract``)
and the same negations, is one copy: the longer one stays. A sentence that differs in any
named thing is a distinct fact and is kept.

An appended sentence is joined by the white space that preceded it in its source. A
source's first sentence is joined by the first sentence separator any source uses ("\\n"
when none has one), or by nothing after Chinese closing punctuation (``。``), which needs no
space; and by "\\n" when the text so far ends without closing punctuation: a space would
glue two statements together.
"""

import re
import unicodedata
from difflib import SequenceMatcher

from operations.consolidation.entities import extract

_END = re.compile(r"(?:[.!?]+[\"'”’)\]]*(?=\s|$)|[。！？；]+[」』”’）)\]]*|\n)")
_FULL_WIDTH_END = "。！？；"
_CLOSING = re.compile(r"(?:[.!?]+[\"'”’)\]]*|[。！？；]+[」』”’）)\]]*)$")


def sentences(text: str) -> list[tuple[str, str]]:
    """``[(leading white space, sentence)]`` such that joining every pair (and nothing
    else) gives back ``text`` exactly; a sentence keeps its closing punctuation. Trailing
    white space is the lead of a last, empty sentence."""
    out, pos, n = [], 0, len(text)
    while pos < n:
        start = pos
        while pos < n and text[pos].isspace():
            pos += 1
        lead = text[start:pos]
        m = _END.search(text, pos)
        end = m.end() if m else n
        if m and m.group(0) == "\n":
            end = m.start()  # the line break is the next sentence's lead
            if end == pos:
                end = pos + 1  # a blank line: keep consuming white space
                out.append((lead + text[pos:end], ""))
                pos = end
                continue
        out.append((lead, text[pos:end]))
        pos = end
    return out


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _is_cjk(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af"


def holds(text: str, sentence: str) -> bool:
    """Whether ``text`` already says ``sentence`` (see the module docstring)."""
    key = _fold(_CLOSING.sub("", sentence.strip()))
    if not key:
        return True
    hay = _fold(text)
    start = hay.find(key)
    while start >= 0:
        end = start + len(key)
        before = hay[start - 1] if start else ""
        after = hay[end] if end < len(hay) else ""
        if (_edge_ok(key[0], key[1:2], before) and _edge_ok(key[-1], key[-2:-1], after)):
            return True
        start = hay.find(key, start + 1)
    return False


def _edge_ok(edge: str, inner: str, neighbour: str) -> bool:
    """Whether the key's ``edge`` character (``inner``: the key's character next to it) may
    touch ``neighbour`` in the text and keep its tokens: a letter or digit must not run on
    into another one ("use" is not held by "reuse"), and a CJK character standing alone at
    the edge (a unigram token) must not run on into CJK (it would become a bigram)."""
    if not neighbour:
        return True
    if _is_cjk(edge):
        return _is_cjk(inner) or not _is_cjk(neighbour)
    if edge.isalnum():
        return not (neighbour.isalnum() and not _is_cjk(neighbour))
    return True


# Words that turn a sentence into its opposite: two sentences that differ by one are two facts.
_NEGATIONS = frozenset({"not", "no", "never", "nor", "t", "without", "不", "没", "未", "别", "勿", "无"})
# How alike two word sequences must be (difflib's ratio) to be one fact worded twice.
NEAR_RATIO = 0.8
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"  # the ranges of _is_cjk
_WORDS = re.compile(rf"[^\W_{_CJK}]+|[{_CJK}]")


def _words(sentence: str) -> list[str]:
    """The sentence's words without case and punctuation; each CJK character is a word."""
    return _WORDS.findall(unicodedata.normalize("NFKC", sentence).casefold())


def _contains(longer: list[str], shorter: list[str]) -> bool:
    n = len(shorter)
    return any(longer[i:i + n] == shorter for i in range(len(longer) - n + 1))


def near_identical(a: str, b: str) -> bool:
    """Whether two sentences state one fact (see the module docstring): compared without
    case, punctuation and white space, one holds the other's words in a row, or they are at
    least ``NEAR_RATIO`` alike, name the same things and differ by no negation."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    if _contains(wa, wb) or _contains(wb, wa):
        return True
    if SequenceMatcher(None, wa, wb, autojunk=False).ratio() < NEAR_RATIO:
        return False
    return not (set(wa) ^ set(wb)) & _NEGATIONS and extract(a) == extract(b)


def _stand_ins(split: list[list[tuple[str, str]]], base: int) -> dict[tuple[int, int], tuple[int, int]]:
    """For each sentence ``(source, index)`` of ``split`` (``sentences`` of every source),
    the sentence that stands for it: itself, or a near-identical one at least as long.
    Longest first (the base source first among equals), so a sentence that stands for
    others always stands for itself: nothing is dropped for a sentence dropped in turn."""
    def words(key):
        return len(_words(split[key[0]][key[1]][1]))

    keys = [(i, n) for i, parts in enumerate(split) for n, (_, s) in enumerate(parts) if s.strip()]
    keys.sort(key=lambda k: (-words(k), k[0] != base, k))
    kept, stand = [], {}
    for key in keys:
        sentence = split[key[0]][key[1]][1]
        twin = next((k for k in kept if near_identical(split[k[0]][k[1]][1], sentence)), None)
        if twin is None:
            kept.append(key)
        stand[key] = twin or key
    return stand


def _base_kept(split: list[list[tuple[str, str]]], base: int, stand: dict) -> tuple[str, set]:
    """The base source with each sentence that another one stands for replaced by it in place
    (or left out: a replacement without closing punctuation goes in place only at the end or
    before a line break, never glued to the sentence after it). A left-out sentence leaves
    its leading white space to the next one. Returns the text and the sentences placed."""
    parts, out, placed, carry = split[base], [], set(), None
    for n, (lead, sentence) in enumerate(parts):
        lead = lead if carry is None else carry
        carry = None
        who = stand.get((base, n), (base, n))
        if who != (base, n):
            other = split[who[0]][who[1]][1]
            after = parts[n + 1][0] if n + 1 < len(parts) else "\n"
            if who[0] == base or who in placed or not (
                    _CLOSING.search(other.rstrip()) or "\n" in after):
                carry = lead
                continue
            placed.add(who)
            sentence = other
        out.append(lead + sentence)
    return "".join(out), placed


def _separator(texts: list[str]) -> str:
    for text in texts:
        for lead, sentence in sentences(text)[1:]:
            if lead and sentence:
                return lead
    return "\n"


def merge_texts(texts: list[str], *, max_chars: int | None = None) -> str:
    """One text holding every sentence of ``texts`` (oldest first). Raises ValueError for
    no texts, or when the result would exceed ``max_chars``."""
    if not texts:
        raise ValueError("nothing to merge")
    base = max(range(len(texts)), key=lambda i: (len(texts[i]), -i))
    split = [sentences(text) for text in texts]
    stand = _stand_ins(split, base)
    out, placed = _base_kept(split, base, stand)
    default = _separator(texts)
    for i, parts in enumerate(split):
        if i == base:
            continue
        for n, (lead, sentence) in enumerate(parts):
            if (not sentence.strip() or stand[(i, n)] != (i, n) or (i, n) in placed
                    or holds(out, sentence)):
                continue
            closing = _CLOSING.search(out.rstrip())
            if not closing:
                sep = "\n"
            elif closing.group(0)[0] in _FULL_WIDTH_END:
                sep = lead if n else ""
            elif n and lead:
                sep = lead
            else:
                sep = default
            out = out.rstrip() + sep + sentence
    if max_chars is not None and len(out) > max_chars:
        raise ValueError(f"the merged text would be {len(out)} characters (limit {max_chars})")
    return out


def merge_contexts(contexts: list[str], *, contents: list[str], max_chars: int) -> str:
    """The context of a merged memory: the distinct lines of its sources' contexts, in
    source order, without the lines that are the sources' own text (now its content), cut
    to whole lines within ``max_chars``. Their neighbouring turns stay findable in it."""
    own = {line.strip() for text in contents for line in text.splitlines()}
    seen, out, size = set(), [], 0
    for text in contexts:
        for line in text.splitlines():
            key = line.strip()
            if not key or key in own or key in seen:
                continue
            if size + len(line) + (1 if out else 0) > max_chars:
                return "\n".join(out)
            seen.add(key)
            out.append(line)
            size += len(line) + (1 if len(out) > 1 else 0)
    return "\n".join(out)
