"""The stored synonym sets: their one writer, their text form, and query expansion with them.

Parsing and expansion themselves are pure (``search.analysis.synonyms``); this module reads
and writes the ``SynonymSet`` table (through the per-process row cache).
"""

from django.db import transaction

from memories import generation_cache
from memories.errors import InvalidInput
from search.analysis.synonyms import expand_with, parse_lines
from search.analysis.tokenizer import Analyzer
from search.models import SynonymSet, SynonymText

__all__ = ["comment_lines", "expand", "parse_lines", "synonyms_replace", "synonyms_text"]


@transaction.atomic
def synonyms_replace(*, text: str, actor=None) -> int:
    """Replace the whole table with the sets in ``text``; returns how many sets. The text
    itself is kept too (comments, blank lines), for :func:`synonyms_text`."""
    sets = parse_lines(text)
    SynonymSet.objects.all().delete()
    name = getattr(actor, "username", actor) or "system"
    SynonymSet.objects.bulk_create([SynonymSet(terms=s, created_by=name) for s in sets])
    SynonymText.objects.all().delete()
    SynonymText.objects.create(text=text.replace("\r\n", "\n"), updated_by=name)
    generation_cache.bump()  # bulk_create sends no signal
    return len(sets)


def synonyms_text() -> str:
    """The table as editable text: as it was saved (``#`` comments and blank lines kept)
    while it still parses to exactly the stored sets, else one set per line."""
    sets = [s.terms for s in SynonymSet.objects.all()]
    saved = SynonymText.objects.order_by("-id").first()
    if saved is not None:
        try:
            if parse_lines(saved.text) == sets:
                return saved.text
        except InvalidInput:
            pass
    return "\n".join(", ".join(terms) for terms in sets)


def comment_lines(text: str) -> int:
    """How many lines of ``text`` are ``#`` comments (what a save message counts as kept)."""
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("#"))


def expand(terms: list[str], analyzer: Analyzer) -> list[str]:
    """``terms`` expanded with the stored sets (see ``search.analysis.synonyms.expand_with``)."""
    sets = generation_cache.cached(
        "synonym-sets", lambda: [tuple(s.terms) for s in SynonymSet.objects.all()])
    return expand_with(terms, analyzer, sets)
