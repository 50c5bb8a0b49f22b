"""Semantic rescoring on LoCoMo dev: BM25's top window re-ranked with all-MiniLM-L6-v2 cosine.

Runs inside Django like bench/quality.py (throw-away SQLite, own Redis key prefix): LoCoMo is
imported with ``import_locomo`` and the memories are embedded by the worker's job
(``bench.embedding_job``: ``search.embeddings.embed_pending``, the memory's ``content``).
Each question's window is a ``memory_search`` with the default profile's settings but
``w_semantic`` 0 (BM25 over content + context, with the time term), top ``--window`` (100).
Each window is then re-scored offline:

    score = (1 - w) * bm25 / max(bm25 of the window) + w * cos(query, memory)

for several ``w`` (0 = BM25 alone), plus reciprocal-rank fusion (k = 60) of the BM25 and
cosine orders and the encoder alone over the same window. ``--kinds content+context`` also
scores embeddings of content plus context (encoded here, cached under var/bench/).

Latency, timed interleaved question by question (the order alternates): the query encode
alone (batch of 1, the per-process cache cleared), and recall (``memory_search``, limit 10)
with the default profile (rescoring, cache cleared so each question is encoded) against the
same profile with ``w_semantic`` 0. p50 / p99 ms.

    .venv/bin/python bench/semantic.py [--data-dir ../shared/data] [--window 100]

Last line: one JSON object.
"""

import argparse
import copy
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django, embedding_job, results_io  # noqa: E402

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


def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--kinds", default="content",
                        help="memory texts to score: content, content+context (comma separated)")
    args = parser.parse_args()
    import numpy as np

    _django.setup("semantic")
    from bench.quality import aggregate, load_locomo, locomo_questions, query_metrics
    from memories.models import Memory
    from search import embeddings
    from search.memory_search import memory_search
    from search.profiles import profile_resolve
    from search.semantic import encoder

    corpus, _, _ = load_locomo(args.data_dir.resolve())
    questions = locomo_questions(args.data_dir.resolve(), corpus)
    n_emb, encode_s = embedding_job.run_until_done()
    memories = list(Memory.objects.order_by("memory_id").values("memory_id", "content", "context"))
    ids = [m["memory_id"] for m in memories]
    row = {m: i for i, m in enumerate(ids)}
    stored = embeddings.vectors_for(ids)
    emb = {}
    if "content" in args.kinds.split(","):
        emb["content"] = np.stack([stored[m] for m in ids])
    if "content+context" in args.kinds.split(","):
        emb["content+context"] = cached_encode(
            [f"{m['content']}\n{m['context']}" for m in memories], "ctx")

    default = profile_resolve(None)
    bm25_only = copy.copy(default)  # the resolved profile may be a shared cached object
    bm25_only.w_semantic = 0.0
    enc_ms, sem_ms, plain_ms, q_vecs = [], [], [], []
    for n, q in enumerate(questions):
        embeddings.clear_query_cache()
        t = time.perf_counter()
        q_vecs.append(encoder.encode([q["question"]])[0])
        enc_ms.append((time.perf_counter() - t) * 1000)
        for which in (("sem", "plain") if n % 2 else ("plain", "sem")):
            embeddings.clear_query_cache()
            prof = default if which == "sem" else bm25_only
            t = time.perf_counter()
            memory_search(user_id=q["sample_id"], query=q["question"], limit=10, profile=prof)
            (sem_ms if which == "sem" else plain_ms).append((time.perf_counter() - t) * 1000)
    windows = []
    for q in questions:
        res = memory_search(user_id=q["sample_id"], query=q["question"], limit=args.window,
                            profile=bm25_only)
        windows.append([(h.memory_id, h.score) for h in res.results])

    runs: dict[str, list[list[str]]] = {}
    for kind, matrix in emb.items():
        for w in WEIGHTS:
            name = "BM25 window (w=0)" if w == 0 else f"mix w={w} ({kind})"
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
    print(f"{len(questions)} questions, window {args.window}; embedding job: {n_emb} memories "
          f"in {encode_s:.1f} s")
    print(f"query encode p50 {statistics.median(enc_ms):.1f} ms, p99 {pct(enc_ms, 0.99):.1f} ms;"
          f" recall (limit 10) with rescoring p50 {statistics.median(sem_ms):.1f} / p99 "
          f"{pct(sem_ms, 0.99):.1f} ms, without {statistics.median(plain_ms):.1f} / "
          f"{pct(plain_ms, 0.99):.1f} ms")
    print(f"{'system':<36}{'R@5':>8}{'R@10':>8}{'R@25':>8}{'nDCG@10':>9}")
    for name, ranked in runs.items():
        agg = aggregate([(q["category"], query_metrics(r, q["relevant"]))
                         for r, q in zip(ranked, questions, strict=True)])["all"]
        results[name] = round(agg["R@10"], 4)
        print(f"{name:<36}{agg['R@5']:8.3f}{agg['R@10']:8.3f}{agg['R@25']:8.3f}"
              f"{agg['nDCG@10']:9.3f}")
    headline = {
        "window": args.window, "recall@10": results,
        "query_encode_p50_ms": round(statistics.median(enc_ms), 2),
        "query_encode_p99_ms": round(pct(enc_ms, 0.99), 2),
        "recall_rescored_p50_ms": round(statistics.median(sem_ms), 2),
        "recall_rescored_p99_ms": round(pct(sem_ms, 0.99), 2),
        "recall_bm25_p50_ms": round(statistics.median(plain_ms), 2),
        "recall_bm25_p99_ms": round(pct(plain_ms, 0.99), 2),
    }
    results_io.write_headline("semantic", title="Re-ranking the BM25 window on LoCoMo dev",
                              params=vars(args), headline=headline)
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
