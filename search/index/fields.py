"""Index fields: which text goes through which analyzer into which postings.

Each field has its own postings and statistics, so a profile can score against the
stemmed or the plain form of a memory's own content without the two mixing.
"""

import json
from collections import Counter
from dataclasses import dataclass
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


def record_text(plain: dict[str, int], context_tf: dict[str, int], meta: dict[str, str]) -> str:
    """A memory's index record as ``put.lua`` stores it (one string: a GET reads it, and
    splitting it is C's work, not a loop per term): six lines, ``"<n> <x>"`` the content and
    context lengths in tokens, the content terms, their frequencies, the context terms,
    theirs (space-separated: no token holds a space or a line break), and ``meta`` as JSON
    (``type``, ``conv``, ``exp``, ``vf``, ``vu``; empty values left out). ``""`` when the
    memory has no token at all."""
    n, x = sum(plain.values()), sum(context_tf.values())
    if not n + x:
        return ""
    return "\n".join((f"{n} {x}", " ".join(plain), " ".join(map(str, plain.values())),
                      " ".join(context_tf), " ".join(map(str, context_tf.values())),
                      json.dumps({k: v for k, v in meta.items() if v}, ensure_ascii=False,
                                 separators=(",", ":"))))


@dataclass(frozen=True)
class RecordTerms:
    """A stored record read back (:func:`record_read`): lengths, terms and frequencies (as
    text) of the content and of the context, and the filter fields."""

    n: int
    x: int
    terms: list[str]
    tfs: list[str]
    context_terms: list[str]
    context_tfs: list[str]
    meta: dict[str, str]


def record_read(text: str) -> RecordTerms:
    """The :class:`RecordTerms` of a stored record (:func:`record_text`). Raises ValueError when
    the text is not one."""
    head, terms, tfs, cterms, ctfs, meta = text.split("\n", 5)
    n, x = head.split(" ")
    return RecordTerms(int(n), int(x), terms.split(" ") if terms else [],
                  tfs.split(" ") if tfs else [], cterms.split(" ") if cterms else [],
                  ctfs.split(" ") if ctfs else [], json.loads(meta))


def field_lengths(n: int, x: int) -> dict[str, int]:
    """Each index field's document length from a memory's content and context lengths in
    tokens (stopwords go before stemming, so the stemmed content is as long as the plain)."""
    return {CONTENT: n, CONTENT_STEMMED: n, WITH_CONTEXT_STEMMED: n + x}


def record_postings(record: RecordTerms, field: str) -> tuple[list[str], list, int]:
    """``(terms, tfs, dl)`` of one index field from a record: what :func:`fields_of_record`
    gives that field (distinct terms, their frequencies as ``int`` or text, its length),
    for it alone. A serving index is built from every record of a namespace: this is its
    inner loop, so the common case (no two terms of the field the same) is lists made in C;
    only a field where stemming or the context repeats a term sums in Python."""
    dl = field_lengths(record.n, record.x)[field]
    if field == CONTENT:
        return record.terms, record.tfs, dl
    terms = list(map(stem, record.terms))
    tfs = record.tfs
    if field == WITH_CONTEXT_STEMMED:
        terms, tfs = terms + record.context_terms, tfs + record.context_tfs
    if len(set(terms)) != len(terms):
        summed: dict[str, int] = {}
        for term, tf in zip(terms, tfs, strict=True):
            summed[term] = summed.get(term, 0) + int(tf)
        terms, tfs = list(summed), list(summed.values())
    return terms, tfs, dl


def record_fields(text: str) -> dict[str, dict[str, int]]:
    """``{field: {term: tf}}`` of every index field with a term, from a stored record: the
    inverse of :func:`record_text` followed by :func:`fields_of_record`."""
    if not text:
        return {}
    record = record_read(text)
    out = {}
    for field in ANALYZERS:
        terms, tfs, _ = record_postings(record, field)
        if terms:
            out[field] = dict(zip(terms, map(int, tfs), strict=True))
    return out
