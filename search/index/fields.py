"""Index fields: which text goes through which analyzer into which postings.

Each field has its own postings and statistics, so a profile can score against the
stemmed or the plain form of a memory's own content without the two mixing.
"""

from search.analysis.tokenizer import Analyzer

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
