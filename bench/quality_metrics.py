"""Metrics of bench/quality.py: recall@k, nDCG@10 (binary gains), MRR."""

import statistics
from collections import defaultdict
from math import log2

KS = (1, 5, 10, 25, 50)

DEPTH = 50


def query_metrics(ranked: list[str], relevant_by_evidence: list[str | None]) -> dict:
    """Metrics of one question. ``relevant_by_evidence``: the memory id of each evidence id
    (None when an evidence id maps to no memory: it counts as never found)."""
    n_evidence = len(relevant_by_evidence)
    rank_of = {}
    for rank, memory_id in enumerate(ranked[:DEPTH], start=1):
        rank_of.setdefault(memory_id, rank)
    out = {}
    for k in KS:
        found = sum(1 for m in relevant_by_evidence if m is not None and rank_of.get(m, 1e9) <= k)
        out[f"R@{k}"] = found / n_evidence
    relevant = {m for m in relevant_by_evidence if m is not None}
    dcg = sum(1 / log2(r + 1) for r, m in enumerate(ranked[:10], start=1) if m in relevant)
    idcg = sum(1 / log2(r + 1) for r in range(1, min(len(relevant), 10) + 1))
    out["nDCG@10"] = dcg / idcg if idcg else 0.0
    first = min((rank_of[m] for m in relevant if m in rank_of), default=None)
    out["MRR"] = 1 / first if first else 0.0
    return out


def aggregate(rows: list[tuple[int, dict]]) -> dict:
    """``{"all": {metric: mean}, category: {...}}`` from ``[(category, metrics)]``."""
    groups = defaultdict(list)
    for category, metrics in rows:
        groups["all"].append(metrics)
        groups[category].append(metrics)
    return {
        g: {name: statistics.fmean(m[name] for m in ms) for name in ms[0]} | {"n": len(ms)}
        for g, ms in groups.items()
    }

