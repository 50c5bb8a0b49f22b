"""Index fields: which text goes through which analyzer into which postings.

Each field has its own postings and statistics, so a profile can score against the
stemmed or the plain form of a memory's own content without the two mixing.
"""

from memories.index.tokenizer import Analyzer

CONTENT = "c"
CONTENT_STEMMED = "s"

ANALYZERS: dict[str, Analyzer] = {
    CONTENT: Analyzer(stemming=False, stopwords=True, cjk="bigram"),
    CONTENT_STEMMED: Analyzer(stemming=True, stopwords=True, cjk="bigram"),
}


def content_field(*, stemming: bool) -> str:
    """The field a profile with this stemming setting scores against."""
    return CONTENT_STEMMED if stemming else CONTENT
