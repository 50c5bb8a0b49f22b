"""Index fields: which text goes through which analyzer into which postings.

Each field has its own postings and statistics, so a profile can score against the
stemmed or the plain form of a memory's own content without the two mixing.
"""

from collections import Counter
from functools import lru_cache

from search.analysis.tokenizer import Analyzer, stem

CONTENT = "c"
CONTENT_STEMMED = "s"
# Content followed by the memory's context text (e.g. the previous turn), stemmed.
WITH_CONTEXT_STEMMED = "xs"

ANALYZERS: dict[str, Analyzer] = {
    CONTENT: Analyzer(stemming=False, stopwords=True, cjk="bigram"),
    CONTENT_STEMMED: Analyzer(stemming=True, stopwords=True, cjk="bigram"),
    WITH_CONTEXT_STEMMED: Analyzer(stemming=True, stopwords=True, cjk="bigram"),
}


def field_text(field: str, content: str, context: str) -> str:
    """The text a field indexes for one memory."""
    return f"{content}\n{context}" if field == WITH_CONTEXT_STEMMED and context else content


def content_field(*, stemming: bool, context: bool = False) -> str:
    """The field a profile scores against. Context implies the stemmed analyzer."""
    if context:
        return WITH_CONTEXT_STEMMED
    return CONTENT_STEMMED if stemming else CONTENT


# Token lists of context lines, per analyzer, reused across memories: a conversation's
# context lines are its neighbours' contents, so a bulk load meets each line several times.
# Lines longer than this are analysed every time (the cache stays small).
_LINE_CACHE_CHARS = 2000


@lru_cache(maxsize=16384)
def _line_tokens(analyzer: Analyzer, line: str) -> tuple[str, ...]:
    return tuple(analyzer.tokens(line))


def _tokens_by_line(analyzer: Analyzer, text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(_line_tokens(analyzer, line) if len(line) <= _LINE_CACHE_CHARS
                   else analyzer.tokens(line))
    return out


def record_terms(content: str, context: str) -> tuple[dict[str, int], dict[str, int]]:
    """``(content, context)`` term frequencies of one memory: its content analysed without
    stemming (the ``c`` field exactly) and its context lines analysed with stemming, each
    line's tokens cached (neighbouring memories share lines). Every index field derives from
    these two (:func:`fields_of_record`): what the index stores per memory
    (:func:`record_pairs`)."""
    plain = dict(Counter(ANALYZERS[CONTENT].tokens(content)))
    context_tf = (dict(Counter(_tokens_by_line(ANALYZERS[WITH_CONTEXT_STEMMED], context)))
                  if context else {})
    return plain, context_tf


def fields_of_record(plain: dict[str, int], context_tf: dict[str, int]) -> dict[str, dict[str, int]]:
    """``{field: {term: tf}}`` for every index field from a memory's record terms: exactly
    ``ANALYZERS[f].term_frequencies(field_text(f, content, context))`` for each ``f``. The
    stemmed field's tokens are the content's stemmed (stopwords go before stemming, and only
    words are stemmed); the context field's are the stemmed content's plus each context
    line's (no token crosses a line break: NFKC and case folding leave "\\n" alone and no
    token pattern matches it)."""
    stemmed: dict[str, int] = {}
    for term, tf in plain.items():
        s = stem(term)
        stemmed[s] = stemmed.get(s, 0) + tf
    with_context = dict(stemmed)
    for term, tf in context_tf.items():
        with_context[term] = with_context.get(term, 0) + tf
    return {CONTENT: plain, CONTENT_STEMMED: stemmed, WITH_CONTEXT_STEMMED: with_context}


def field_term_frequencies(content: str, context: str) -> dict[str, dict[str, int]]:
    """``{field: {term: tf}}`` of one memory for every index field (:func:`fields_of_record`
    of :func:`record_terms`)."""
    return fields_of_record(*record_terms(content, context))


# A record's keys: content terms as they are, context terms after this mark, and the
# meta fields after "#" (no token starts with either: tokens are words, numbers, dates).
CONTEXT_MARK = "+"


def record_pairs(plain: dict[str, int], context_tf: dict[str, int],
                 meta: dict[str, str]) -> list[str]:
    """The flat field/value list of a memory's index record (``put.lua`` stores it as one
    hash): ``#n`` / ``#x`` the content / context lengths in tokens, ``meta`` (``#type``,
    ``#conv``, ...; empty values left out), each content term and its tf, each context term
    after :data:`CONTEXT_MARK` and its tf. Empty when the memory has no token at all."""
    n, x = sum(plain.values()), sum(context_tf.values())
    if not n + x:
        return []
    out = ["#n", str(n), "#x", str(x)]
    for name, value in meta.items():
        if value:
            out += [name, value]
    for term, tf in plain.items():
        out += [term, str(tf)]
    for term, tf in context_tf.items():
        out += [CONTEXT_MARK + term, str(tf)]
    return out


def record_fields(pairs: dict[str, str]) -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """``({field: {term: tf}}, meta)`` of a stored record (``{name: value}`` as read): the
    inverse of :func:`record_pairs` followed by :func:`fields_of_record`; a field with no
    term is left out."""
    fields = {f: record_field(pairs, f) for f in ANALYZERS}
    return {f: tf for f, tf in fields.items() if tf}, record_meta(pairs)


# The meta fields of a record a reader needs (``#n`` and ``#x`` are for the statistics).
META = ("#type", "#conv", "#exp", "#vf", "#vu")


def record_meta(pairs: dict[str, str]) -> dict[str, str]:
    """The filter fields of a stored record (those it holds)."""
    return {name: pairs[name] for name in META if name in pairs}


def record_field(pairs: dict[str, str], field: str) -> dict[str, int]:
    """``{term: tf}`` of one index field from a stored record (``{name: value}`` as read):
    what :func:`fields_of_record` gives that field, computed for it alone (a serving index
    is built from every record of a namespace: this is its inner loop)."""
    if field == CONTENT:
        return {k: int(v) for k, v in pairs.items() if k[0] != "#" and k[0] != CONTEXT_MARK}
    out: dict[str, int] = {}
    context = field == WITH_CONTEXT_STEMMED
    for k, v in pairs.items():
        first = k[0]
        if first == "#":
            continue
        if first == CONTEXT_MARK:
            if context:
                k = k[1:]
                out[k] = out.get(k, 0) + int(v)
        else:
            k = stem(k)
            out[k] = out.get(k, 0) + int(v)
    return out
