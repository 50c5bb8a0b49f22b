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


def own_field(field: str) -> str:
    """The field of a memory's own content analysed as ``field`` analyses it ("" when
    ``field`` is one): which matched terms came from the context text alone."""
    return CONTENT_STEMMED if field == WITH_CONTEXT_STEMMED else ""


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


def field_term_frequencies(content: str, context: str) -> dict[str, dict[str, int]]:
    """``{field: {term: tf}}`` of one memory for every index field: exactly
    ``ANALYZERS[f].term_frequencies(field_text(f, content, context))`` for each ``f``, computed
    with less work. The content is analysed once without stemming: the stemmed field's
    tokens are those stemmed (stopwords go before stemming, and only words are stemmed);
    the context field's are the stemmed content's plus each context line's (no token
    crosses a line break: NFKC and case folding leave "\\n" alone and no token pattern
    matches it), and a line's tokens are cached (neighbouring memories share lines)."""
    plain_tokens = ANALYZERS[CONTENT].tokens(content)
    stemmed_tokens = [stem(t) for t in plain_tokens]
    context_tokens = (_tokens_by_line(ANALYZERS[WITH_CONTEXT_STEMMED], context)
                      if context else [])
    return {CONTENT: dict(Counter(plain_tokens)),
            CONTENT_STEMMED: dict(Counter(stemmed_tokens)),
            WITH_CONTEXT_STEMMED: dict(Counter(stemmed_tokens + context_tokens))}
