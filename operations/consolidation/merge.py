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

An appended sentence is joined by the white space that preceded it in its source. A
source's first sentence is joined by the first sentence separator any source uses ("\\n"
when none has one), or by nothing after Chinese closing punctuation (``。``), which needs no
space; and by "\\n" when the text so far ends without closing punctuation: a space would
glue two statements together.
"""

import re
import unicodedata

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
    out = texts[base]
    default = _separator(texts)
    for i, text in enumerate(texts):
        if i == base:
            continue
        for n, (lead, sentence) in enumerate(sentences(text)):
            if not sentence.strip() or holds(out, sentence):
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
