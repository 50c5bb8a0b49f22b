"""The stored synonym sets: their one writer, their text form, and query expansion with them.

Parsing and expansion themselves are pure (``search.analysis.synonyms``); this module reads
and writes the ``SynonymSet`` table (through the per-process row cache).
"""

from django.db import transaction

from memories import generation_cache
from search.analysis.synonyms import expand_with, parse_lines
from search.analysis.tokenizer import Analyzer
from search.models import SynonymSet

__all__ = ["expand", "parse_lines", "synonyms_replace", "synonyms_text"]


@transaction.atomic
def synonyms_replace(*, text: str, actor=None) -> int:
    """Replace the whole table with the sets in ``text``; returns how many sets."""
    sets = parse_lines(text)
    SynonymSet.objects.all().delete()
    name = getattr(actor, "username", actor) or "system"
    SynonymSet.objects.bulk_create([SynonymSet(terms=s, created_by=name) for s in sets])
    generation_cache.bump()  # bulk_create sends no signal
    return len(sets)


def synonyms_text() -> str:
    """The table as editable text, one set per line."""
    return "\n".join(", ".join(s.terms) for s in SynonymSet.objects.all())


def expand(terms: list[str], analyzer: Analyzer) -> list[str]:
    """``terms`` expanded with the stored sets (see ``search.analysis.synonyms.expand_with``)."""
    sets = generation_cache.cached(
        "synonym-sets", lambda: [tuple(s.terms) for s in SynonymSet.objects.all()])
    return expand_with(terms, analyzer, sets)
