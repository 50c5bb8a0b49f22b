"""Semantic rescoring on LoCoMo dev: BM25's top window re-ranked with all-MiniLM-L6-v2 cosine.

Runs inside Django like bench/quality.py (throw-away SQLite, own Redis key prefix): LoCoMo is
imported with ``import_locomo``; each question is a ``memory_search`` with the default
profile (``context``), top ``--window`` (100). Each result list is then re-scored offline:

    score = (1 - w) * bm25 / max(bm25 of the window) + w * cos(query, memory)

for several ``w`` (0 = the profile as it is), plus reciprocal-rank fusion (k = 60) and the
encoder alone over the same window. The memory's embedding is of its ``content`` or of
``content + context`` (both reported). Encoder timing: per query (batch of 1) p50 / p99 ms.
Embeddings are cached under var/bench/ by content hash.

    .venv/bin/python bench/semantic.py [--data-dir ../shared/data] [--window 100]

Last line: one JSON object.
"""

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0)


def cached_encode(texts: list[str], tag: str):
    import numpy as np

    from search.semantic import encoder

    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = ROOT / "var" / "bench" / f"emb-{tag}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = encoder.encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--kinds", default="content,content+context",
                        help="which memory texts to embed (comma separated)")
    args = parser.parse_args()
    import os

    import numpy as np

    os.environ["DATABASE_URL"] = f"sqlite:///{ROOT / 'var' / 'bench' / f'sem-{os.getpid()}.db'}"
    _django.setup("semantic")
    from bench.quality import aggregate, load_locomo, locomo_questions, query_metrics
    from memories.models import Memory
    from search.memory_search import memory_search
    from search.semantic import encoder

    corpus, _, _ = load_locomo(args.data_dir.resolve())
    questions = locomo_questions(args.data_dir.resolve(), corpus)
    memories = list(Memory.objects.order_by("memory_id").values("memory_id", "content", "context"))
    ids = [m["memory_id"] for m in memories]
    row = {m: i for i, m in enumerate(ids)}
    t = time.perf_counter()
    kinds = args.kinds.split(",")
    emb = {}
    if "content" in kinds:
        emb["content"] = cached_encode([m["content"] for m in memories], "content")
    if "content+context" in kinds:
        emb["content+context"] = cached_encode(
            [f"{m['content']}\n{m['context']}" for m in memories], "ctx")
    encode_s = time.perf_counter() - t
    q_ms, q_vecs = [], []
    for q in questions:
        t = time.perf_counter()
        q_vecs.append(encoder.encode([q["question"]])[0])
        q_ms.append((time.perf_counter() - t) * 1000)
    windows = []
    for q in questions:
        res = memory_search(user_id=q["sample_id"], query=q["question"], limit=args.window)
        windows.append([(h.memory_id, h.explain.bm25) for h in res.results])

    runs: dict[str, list[list[str]]] = {}
    for kind, matrix in emb.items():
        for w in WEIGHTS:
            name = "context profile" if w == 0 else f"mix w={w} ({kind})"
            if w == 0 and name in runs:
                continue
            out = []
            for qv, win in zip(q_vecs, windows, strict=True):
                if not win:
                    out.append([])
                    continue
                best = max(b for _, b in win) or 1.0
                cos = matrix[[row[m] for m, _ in win]] @ qv
                scores = [(1 - w) * b / best + w * float(c)
                          for (_, b), c in zip(win, cos, strict=True)]
                order = sorted(range(len(win)), key=lambda i: (-scores[i], win[i][0]))
                out.append([win[i][0] for i in order])
            runs[name] = out
        rrf = []
        for qv, win in zip(q_vecs, windows, strict=True):
            cos = matrix[[row[m] for m, _ in win]] @ qv if win else np.zeros(0)
            by_cos = sorted(range(len(win)), key=lambda i: -cos[i])
            fused = {win[i][0]: 1 / (61 + r) for r, i in enumerate(range(len(win)))}
            for r, i in enumerate(by_cos):
                fused[win[i][0]] += 1 / (61 + r)
            rrf.append(sorted(fused, key=lambda m: (-fused[m], m)))
        runs[f"rrf k=60 ({kind})"] = rrf
    results = {}
    print(f"{len(questions)} questions, window {args.window}; memory embeddings {encode_s:.1f} s; "
          f"query encode p50 {statistics.median(q_ms):.1f} ms, "
          f"p99 {sorted(q_ms)[int(0.99 * len(q_ms))]:.1f} ms")
    print(f"{'system':<36}{'R@5':>8}{'R@10':>8}{'R@25':>8}{'nDCG@10':>9}")
    for name, ranked in runs.items():
        agg = aggregate([(q["category"], query_metrics(r, q["relevant"]))
                         for r, q in zip(ranked, questions, strict=True)])["all"]
        results[name] = round(agg["R@10"], 4)
        print(f"{name:<36}{agg['R@5']:8.3f}{agg['R@10']:8.3f}{agg['R@25']:8.3f}"
              f"{agg['nDCG@10']:9.3f}")
    print(json.dumps({"window": args.window, "recall@10": results,
                      "query_encode_p50_ms": round(statistics.median(q_ms), 2)}))


if __name__ == "__main__":
    main()
