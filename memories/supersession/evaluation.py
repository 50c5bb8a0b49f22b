"""Pair precision and recall of the detector over labelled namespace histories.

Shape of a case (the dev set's JSON lines): {"id", "lang", "memories": [{"key", "content"}, ...]
in time order, "supersedes": [[newer_key, older_key], ...]}.
"""

from collections.abc import Iterable

from memories.supersession.detector import pairs_for


def score(cases: Iterable[dict]) -> dict:
    """{"all"|<lang>: {"precision", "recall", "tp", "fp", "fn"}, "errors": [(case id, kind, pair)]}."""
    counts: dict[str, list[int]] = {}
    errors = []
    for case in cases:
        predicted = set(pairs_for([(m["key"], m["content"]) for m in case["memories"]]))
        expected = {tuple(pair) for pair in case["supersedes"]}
        for lang in ("all", case.get("lang", "?")):
            row = counts.setdefault(lang, [0, 0, 0])
            row[0] += len(predicted & expected)
            row[1] += len(predicted - expected)
            row[2] += len(expected - predicted)
        errors += [(case["id"], "fp", pair) for pair in sorted(predicted - expected)]
        errors += [(case["id"], "fn", pair) for pair in sorted(expected - predicted)]
    figures: dict = {"errors": errors}
    for lang, (tp, fp, fn) in counts.items():
        figures[lang] = {"precision": tp / (tp + fp) if tp + fp else 1.0,
                         "recall": tp / (tp + fn) if tp + fn else 1.0, "tp": tp, "fp": fp, "fn": fn}
    return figures
