"""Recall latency and ingest throughput at scale, against the real Redis, with peers.

Builds a corpus of synthetic memory texts (bench/corpus.py), loads it through the bulk
service ``memory_create_many`` (100k memories in one namespace, then 10 namespaces of 10k),
and measures ``memory_search`` in-process (not HTTP) after a warm-up over a fixed mix of
1,000 queries: a third rare-term, a third common-term, a third mixed. rank_bm25 (BM25Okapi)
and bm25s (Lucene variant) run on the same documents and the same tokens, one query at a
time; rank_bm25 is timed on a stratified 150-query subset because it scans every document.

    .venv/bin/python bench/recall.py [--docs 100000] [--queries 1000] [--skip-multi]

Prints a table, then as its LAST line one JSON object for the 100k-in-one-namespace run.
"""

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django  # noqa: E402


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(ms):
    return {"p50_ms": pct(ms, 50), "p95_ms": pct(ms, 95), "p99_ms": pct(ms, 99),
            "mean_ms": statistics.fmean(ms)}


def ingest(services, user_id, texts, batch=2000):
    started = time.perf_counter()
    for s in range(0, len(texts), batch):
        services.memory_create_many(items=[
            {"user_id": user_id, "content": t, "importance": 0.5} for t in texts[s:s + batch]])
    return len(texts) / (time.perf_counter() - started)


def make_queries(tokens_per_doc, n, seed=3):
    """A fixed mix: rare (df <= 20), common (df >= 5% of docs) and mixed (one of each + one
    mid-frequency term). Returns [(kind, [terms])]."""
    df = Counter(t for toks in tokens_per_doc for t in set(toks))
    n_docs = len(tokens_per_doc)
    rare = sorted(t for t, d in df.items() if 2 <= d <= 20)
    common = sorted(t for t, d in df.items() if d >= 0.05 * n_docs)
    mid = sorted(t for t, d in df.items() if 200 <= d < 0.05 * n_docs)
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = ("rare", "common", "mixed")[i % 3]
        if kind == "rare":
            terms = rng.sample(rare, 2)
        elif kind == "common":
            terms = rng.sample(common, 2)
        else:
            terms = [rng.choice(common), rng.choice(mid or common), rng.choice(rare)]
        out.append((kind, terms))
    return out, {"rare_terms": len(rare), "common_terms": len(common),
                 "max_df": max(df.values())}


def time_ours(memory_search, profile, user_id, queries, limit):
    for _, terms in queries[:50]:  # warm-up
        memory_search(user_id=user_id, query=" ".join(terms), limit=limit, profile=profile)
    by_kind = {"rare": [], "common": [], "mixed": []}
    for kind, terms in queries:
        t = time.perf_counter()
        memory_search(user_id=user_id, query=" ".join(terms), limit=limit, profile=profile)
        by_kind[kind].append((time.perf_counter() - t) * 1000)
    return by_kind


def time_bm25s(tokens_per_doc, queries, limit):
    import bm25s
    import numpy as np

    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in tokens_per_doc]
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    ms = []
    for _, terms in queries:
        q = [vocab[t] for t in terms if t in vocab]
        t = time.perf_counter()
        scores = retriever.get_scores(q)
        top = np.argpartition(-scores, limit)[:limit]
        top[np.argsort(-scores[top])]
        ms.append((time.perf_counter() - t) * 1000)
    return ms


def time_rank_bm25(tokens_per_doc, queries, limit):
    import numpy as np
    from rank_bm25 import BM25Okapi

    bm = BM25Okapi(tokens_per_doc)
    ms = []
    for _, terms in queries:
        t = time.perf_counter()
        scores = bm.get_scores(terms)
        np.argsort(-scores)[:limit]
        ms.append((time.perf_counter() - t) * 1000)
    return ms


def redis_used_bytes(client):
    return int(client.info("memory")["used_memory"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--skip-multi", action="store_true", help="skip 10 namespaces of 10k")
    args = parser.parse_args()

    _django.setup("recall")
    from bench.corpus import memory_texts
    from memories import services, store
    from search.index import fields
    from search.memory_search import memory_search
    from search.models import RankingProfile

    client = store.get_client()
    bm25 = RankingProfile.objects.get(name="bm25")
    analyzer = fields.ANALYZERS[fields.CONTENT]

    texts = memory_texts(args.docs, seed=1)
    before = redis_used_bytes(client)
    gc.disable()
    rate = ingest(services, "bench-big", texts)
    gc.enable()
    per_memory = (redis_used_bytes(client) - before) / args.docs
    tokens = [analyzer.tokens(t) for t in texts]
    queries, qinfo = make_queries(tokens, args.queries)
    ours = time_ours(memory_search, bm25, "bench-big", queries, args.limit)
    all_ms = [v for vs in ours.values() for v in vs]
    peers_bm25s = time_bm25s(tokens, queries, args.limit)
    subset = [q for i, q in enumerate(queries) if i % max(1, len(queries) // 150) == 0][:150]
    peers_rank = time_rank_bm25(tokens, subset, args.limit)

    print(f"corpus: {args.docs} memories in one namespace; {qinfo}")
    print(f"ingest through memory_create_many: {rate:,.0f} memories/s; "
          f"Redis memory per memory: {per_memory:,.0f} bytes")
    print(f"{'query kind':<10} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for kind, ms in ours.items():
        s = summary(ms)
        print(f"{kind:<10} {s['p50_ms']:8.2f} {s['p95_ms']:8.2f} {s['p99_ms']:8.2f}")
    s_all, s_bm25s, s_rank = summary(all_ms), summary(peers_bm25s), summary(peers_rank)
    print(f"{'all':<10} {s_all['p50_ms']:8.2f} {s_all['p95_ms']:8.2f} {s_all['p99_ms']:8.2f}")
    print(f"{'bm25s':<10} {s_bm25s['p50_ms']:8.2f} {s_bm25s['p95_ms']:8.2f} "
          f"{s_bm25s['p99_ms']:8.2f}  (same tokens, one query at a time)")
    print(f"{'rank_bm25':<10} {s_rank['p50_ms']:8.2f} {s_rank['p95_ms']:8.2f} "
          f"{s_rank['p99_ms']:8.2f}  ({len(subset)}-query stratified subset)")

    multi = {}
    if not args.skip_multi:
        started = time.perf_counter()
        for n in range(10):
            ingest(services, f"bench-ns{n}", memory_texts(10_000, seed=100 + n))
        multi_rate = 100_000 / (time.perf_counter() - started)
        ns_tokens = [analyzer.tokens(t) for t in memory_texts(10_000, seed=100)]
        ns_queries, _ = make_queries(ns_tokens, args.queries)
        ms = []
        rng = random.Random(5)
        for _kind, terms in ns_queries:
            ns = f"bench-ns{rng.randrange(10)}"
            t = time.perf_counter()
            memory_search(user_id=ns, query=" ".join(terms), limit=args.limit, profile=bm25)
            ms.append((time.perf_counter() - t) * 1000)
        multi = {"ingest_per_s": multi_rate, **summary(ms)}
        print(f"10 namespaces x 10k: ingest {multi_rate:,.0f}/s; recall p50 "
              f"{multi['p50_ms']:.2f} ms, p99 {multi['p99_ms']:.2f} ms")

    result = {
        "n_docs": args.docs, "queries": len(queries), "limit": args.limit,
        "p50_ms": round(s_all["p50_ms"], 3), "p95_ms": round(s_all["p95_ms"], 3),
        "p99_ms": round(s_all["p99_ms"], 3),
        "by_kind": {k: {m: round(v, 3) for m, v in summary(ms).items()} for k, ms in ours.items()},
        "rank_bm25_p50_ms": round(s_rank["p50_ms"], 3),
        "bm25s_p50_ms": round(s_bm25s["p50_ms"], 3),
        "ratio_rank_bm25_p50": round(s_rank["p50_ms"] / s_all["p50_ms"], 1),
        "ratio_vs_bm25s_p50": round(s_all["p50_ms"] / s_bm25s["p50_ms"], 2),
        "ingest_per_s": round(rate), "redis_bytes_per_memory": round(per_memory),
        "multi_namespace": {k: round(v, 3) for k, v in multi.items()},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
