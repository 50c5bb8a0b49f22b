"""Our ranking profiles in bench/quality.py: each question a ``memory_search`` in its namespace."""

import statistics

PROFILES = ("bm25", "stemmed", "context", "keyword")


def run_ours(questions, *, namespace_of, depth, profiles=PROFILES) -> tuple[dict, dict]:
    from search.memory_search import memory_search

    ranked, took = {}, {}
    for name in profiles:
        runs, ms = [], []
        for q in questions:
            res = memory_search(
                user_id=namespace_of(q), query=q["question"], limit=depth, profile=name
            )
            runs.append([h.memory_id for h in res.results])
            ms.append(res.took_ms)
        ranked[name], took[name] = runs, statistics.median(ms)
    return ranked, took
