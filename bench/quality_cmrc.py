"""CMRC 2018 for bench/quality.py: each paragraph a memory, each question a query."""

import json
import statistics
import time
from pathlib import Path

from bench.quality_metrics import aggregate, query_metrics
from bench.quality_ours import run_ours
from bench.quality_peers import Bm25sIndex, rank_ids


def run_cmrc(data_dir: Path):
    from memories import services
    from search.index import fields

    data = json.loads((data_dir / "cmrc2018_dev_part.json").read_text(encoding="utf-8"))
    paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
    started = time.perf_counter()
    made = []
    for s in range(0, len(paragraphs), 500):
        made += services.memory_create_many(
            items=[
                {
                    "user_id": "cmrc",
                    "content": p["context"],
                    "importance": 0.5,
                    "source": "cmrc2018",
                    "metadata": {"paragraph": p["id"]},
                }
                for p in paragraphs[s : s + 500]
            ]
        )
    import_s = time.perf_counter() - started
    para_mem = [m.memory_id for m, _ in made]
    questions = [
        {"question": qa["question"], "category": 0, "relevant": [para_mem[n]]}
        for n, p in enumerate(paragraphs)
        for qa in p["qas"]
    ]
    ranked, took = run_ours(questions, namespace_of=lambda q: "cmrc", depth=10)
    ids = sorted(set(para_mem))
    content = {m.memory_id: m.content for m, _ in made}
    for label, key in (
        ("bm25s (plain tokens)", fields.CONTENT),
        ("bm25s (stemmed tokens)", fields.CONTENT_STEMMED),
    ):
        analyzer = fields.ANALYZERS[key]
        index = Bm25sIndex([analyzer.tokens(content[m]) for m in ids])
        ranked[label] = [
            rank_ids(index.scores(analyzer.tokens(q["question"])), ids, 10) for q in questions
        ]
    results = {}
    for name, runs in ranked.items():
        ms = [query_metrics(r, q["relevant"]) for r, q in zip(runs, questions, strict=True)]
        agg = aggregate([(0, m) for m in ms])["all"]
        results[name] = {
            "R@1": agg["R@1"],
            "R@5": agg["R@5"],
            "R@10": agg["R@10"],
            "MRR@10": statistics.fmean(
                _mrr_at(r, q["relevant"], 10) for r, q in zip(runs, questions, strict=True)
            ),
        }
    return results, took, len(set(para_mem)), len(questions), import_s


def _mrr_at(ranked, relevant, k):
    for rank, m in enumerate(ranked[:k], start=1):
        if m in relevant:
            return 1 / rank
    return 0.0

