"""Query-time synonym expansion and the one writer of SynonymSet.

The table holds sets of equivalent terms written as a person would ("car, automobile");
each member is analysed with the profile's analyzer when a query is expanded, so a stemmed
profile matches stemmed postings. Expansion adds terms; it never removes the original.
"""

from django.db import transaction

from memories import generation_cache
from memories.errors import InvalidInput
from search.analysis.tokenizer import Analyzer
from search.models import SynonymSet


def parse_lines(text: str) -> list[list[str]]:
    """``"car, automobile\\nnyc, new york"`` -> ``[["car", "automobile"], ["nyc", "new york"]]``.

    Blank lines and ``#`` comments are skipped; a set needs at least two members
    (InvalidInput naming the line otherwise).
    """
    sets = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        members = [m.strip() for m in line.split(",") if m.strip()]
        if len(members) < 2:
            raise InvalidInput(f"line {n}: a synonym set needs two or more terms", field="synonyms")
        sets.append(members)
    return sets


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
    """``terms`` plus, for each term in a synonym set, the set's other members' tokens;
    distinct, originals first."""
    out = list(dict.fromkeys(terms))
    present = set(out)
    sets = generation_cache.cached(
        "synonym-sets", lambda: [tuple(s.terms) for s in SynonymSet.objects.all()])
    for members in sets:
        analysed = [analyzer.tokens(member) for member in members]
        if any(len(tokens) == 1 and tokens[0] in present for tokens in analysed) or any(
                tokens and all(t in present for t in tokens) for tokens in analysed):
            for tokens in analysed:
                for t in tokens:
                    if t not in present:
                        present.add(t)
                        out.append(t)
    return out
