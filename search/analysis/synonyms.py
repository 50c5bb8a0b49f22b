"""Synonym sets as text and query-time expansion with them (pure: no Django, no Redis).

A set is terms that mean the same, written as a person would ("car, automobile"), like a line
of a Solr synonyms file. Each member is analysed with the profile's analyzer when a query is
expanded, so a stemmed profile matches stemmed postings. Expansion adds terms; it never
removes the original. The stored sets (``SynonymSet``) are read by ``search.synonym_sets``.
"""

from collections.abc import Iterable, Sequence

from memories.errors import InvalidInput
from search.analysis.tokenizer import Analyzer


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


def expand_with(terms: list[str], analyzer: Analyzer,
                sets: Iterable[Sequence[str]]) -> list[str]:
    """``terms`` plus, for each term in one of ``sets``, the set's other members' tokens;
    distinct, originals first. A member of several tokens ("new york") matches when all its
    tokens are among the terms."""
    out = list(dict.fromkeys(terms))
    present = set(out)
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
