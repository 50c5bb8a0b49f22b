"""Retrieval quality on LoCoMo and CMRC 2018: our ranking profiles against bm25s and rank_bm25.

Runs inside Django with a throw-away SQLite file under var/bench/ and the Redis key prefix
``mcbench-quality-<pid>`` (both removed at the end; see bench/_django.py). LoCoMo is imported
through the product path (``manage.py import_locomo``: one memory per dialog turn, namespace =
``sample_id``); each question of ``locomo_dev_qrels.jsonl`` is a ``memory_search`` in its
namespace (top 50). CMRC 2018: each paragraph one memory in namespace ``cmrc``, each question a
query whose one relevant document is its paragraph.

The peers see the SAME documents (the memories as stored, one index per namespace) and the
SAME tokens (``search.index.fields.ANALYZERS``; each distinct query term counted once, as
our search does): bm25s with Lucene BM25 (k1 1.2, b 0.75, as our ``bm25`` profile), and
rank_bm25's BM25Okapi (k1 1.2, b 0.75, its own IDF with an epsilon floor: not Lucene's formula,
reported as is). Ties are broken by memory id everywhere, as our search does, so ``bm25`` and
``bm25s`` on plain tokens should agree to float precision.

Extra rows (bm25s on our tokens, no product change) measure context indexing: a turn indexed
with the previous turn of its session (one field, concatenated), with previous and next turn,
and as a separate context field with its own statistics scored ``bm25(own) + w * bm25(ctx)``
(what DESIGN.md describes), plus the import without photo captions.

    .venv/bin/python bench/quality.py [--data-dir ../shared/data] [--skip-cmrc]

Metrics: recall@k = share of a question's evidence ids found in the top k, averaged over the
questions with at least one evidence id; nDCG@10 with binary gains; MRR within the top 50
(LoCoMo) or 10 (CMRC). Prints tables, then as its LAST line one JSON object of the headline
numbers.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django, embedding_job, live_api, memorybank, results_io  # noqa: E402
from bench.quality_cmrc import run_cmrc  # noqa: E402
from bench.quality_data import load_locomo, locomo_questions  # noqa: E402
from bench.quality_metrics import DEPTH, KS, aggregate, query_metrics  # noqa: E402
from bench.quality_ours import PROFILES, run_ours  # noqa: E402
from bench.quality_peers import locomo_peer_runs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-dom", 4: "single-hop", 5: "adversarial"}


# --- output -------------------------------------------------------------------------------------


def print_locomo(results: dict, took: dict, n_questions: int) -> None:
    cols = [f"R@{k}" for k in KS] + ["nDCG@10", "MRR"]
    print(f"\nLoCoMo: {n_questions} questions with evidence; recall@k / nDCG@10 / MRR@50, overall")
    print(f"{'system':<38}" + "".join(f"{c:>9}" for c in cols) + f"{'p50 ms':>9}")
    for name, agg in results.items():
        lat = f"{took[name]:9.2f}" if name in took else ""
        print(f"{name:<38}" + "".join(f"{agg['all'][c]:9.3f}" for c in cols) + lat)
    cats = sorted(c for c in next(iter(results.values())) if c != "all")
    print("\nLoCoMo recall@10 per category (n questions)")
    print(f"{'system':<38}" + "".join(f"{CATEGORIES.get(c, c):>12}" for c in cats))
    print(
        f"{'':<38}"
        + "".join(f"{'(' + str(next(iter(results.values()))[c]['n']) + ')':>12}" for c in cats)
    )
    for name, agg in results.items():
        print(f"{name:<38}" + "".join(f"{agg[c]['R@10']:12.3f}" for c in cats))
    print("\nLoCoMo nDCG@10 per category")
    for name, agg in results.items():
        print(f"{name:<38}" + "".join(f"{agg[c]['nDCG@10']:12.3f}" for c in cats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--skip-cmrc", action="store_true")
    parser.add_argument("--live", choices=("none", "memories", "sessions", "both"),
                        default="both", help="also write LoCoMo through the API turn by turn")
    parser.add_argument("--skip-memorybank", action="store_true")
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    started = time.perf_counter()

    import logging
    import os

    import bm25s  # noqa: F401  (its import sets its logger to DEBUG)

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    # Always a throw-away SQLite file, whatever DATABASE_URL the shell holds.
    db = ROOT / "var" / "bench" / f"quality-{os.getpid()}.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    _django.setup("quality")
    from django.conf import settings

    print(
        f"data: {data_dir}; redis {settings.REDIS_URL} prefix {settings.MEMORY_KEY_PREFIX}; "
        f"database {db.relative_to(ROOT)}"
    )

    corpus, import_s, import_line = load_locomo(data_dir)
    n_mem = sum(len(c["memory_ids"]) for c in corpus.values())
    print(
        f"LoCoMo import (manage.py import_locomo): {import_line} in {import_s:.1f} s "
        f"({n_mem} memories, {len(corpus)} namespaces)"
    )
    questions = locomo_questions(data_dir, corpus)
    unmapped = sum(1 for q in questions for m in q["relevant"] if m is None)
    t = time.perf_counter()
    # Before the worker's embedding job: the default profile's semantic rescoring has no
    # embedding to use yet (BM25 alone); then the job, then the default profile again.
    ranked, took = run_ours(questions, namespace_of=lambda q: q["sample_id"], depth=DEPTH)
    ranked["context, before embeddings"] = ranked.pop("context")
    took["context, before embeddings"] = took.pop("context")
    n_emb, emb_s = embedding_job.run_until_done()
    print(f"embedding job (the worker's, search.embeddings): {n_emb} memories in {emb_s:.1f} s")
    again, again_took = run_ours(questions, namespace_of=lambda q: q["sample_id"], depth=DEPTH,
                                 profiles=("context",))
    ranked.update(again)
    took.update(again_took)
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    ranked.update(locomo_peer_runs(questions, corpus))
    peers_s = time.perf_counter() - t
    results = {}
    for name, runs in ranked.items():
        results[name] = aggregate(
            [
                (q["category"], query_metrics(r, q["relevant"]))
                for r, q in zip(runs, questions, strict=True)
            ]
        )
    print(
        f"queries: ours {ours_s:.1f} s (3 profiles x {len(questions)}), peers and context "
        f"variants {peers_s:.1f} s; evidence ids without a memory: {unmapped}"
    )
    print_locomo(results, took, len(questions))
    agree = statistics.fmean(
        a == b for a, b in zip(ranked["bm25"], ranked["bm25s (plain tokens)"], strict=True)
    )
    print(
        f"\nidentical top-50 lists, profile bm25 vs bm25s (plain tokens): {agree:.1%} of questions"
    )

    live = {}
    for mode in ("memories", "sessions") if args.live == "both" else (
            () if args.live == "none" else (args.live,)):
        live[mode], before = live_api.run(data_dir, questions, mode)
        live[mode + ", before embeddings"] = before
        print(f"\nLoCoMo through the API turn by turn ({mode}, server-built context, default "
              f"profile): R@5 {live[mode]['R@5']:.3f} R@10 {live[mode]['R@10']:.3f} "
              f"R@50 {live[mode]['R@50']:.3f}; before the embedding job R@10 "
              f"{before['R@10']:.3f} (import_locomo's default profile: "
              f"{results['context']['all']['R@10']:.3f})")
    mbank = None
    if not args.skip_memorybank:
        mbank = memorybank.run(data_dir, PROFILES, embed=embedding_job.run_until_done)
        memorybank.print_table(mbank)

    cmrc = None
    if not args.skip_cmrc:
        cmrc, cmrc_took, n_par, n_q, cmrc_import = run_cmrc(data_dir)
        print(
            f"\nCMRC 2018 (part of dev): {n_par} paragraphs in namespace cmrc (import "
            f"{cmrc_import:.1f} s), {n_q} questions, relevant = its paragraph"
        )
        print(f"{'system':<38}{'R@1':>9}{'R@5':>9}{'R@10':>9}{'MRR@10':>9}{'p50 ms':>9}")
        for name, m in cmrc.items():
            lat = f"{cmrc_took[name]:9.2f}" if name in cmrc_took else ""
            print(
                f"{name:<38}{m['R@1']:9.3f}{m['R@5']:9.3f}{m['R@10']:9.3f}{m['MRR@10']:9.3f}{lat}"
            )

    total = time.perf_counter() - started
    print(f"\ntotal {total:.1f} s")

    def pick(metric, names=None):
        return {n: round(results[n]["all"][metric], 4) for n in (names or results)}

    main_rows = [
        *PROFILES,
        "bm25s (plain tokens)",
        "bm25s (stemmed tokens)",
        "rank_bm25 (plain tokens)",
        "rank_bm25 (stemmed tokens)",
    ]
    headline = {
        "locomo_questions": len(questions),
        "locomo_recall@5": pick("R@5", main_rows),
        "locomo_default_before_embeddings_recall@10": pick(
            "R@10", ["context, before embeddings"])["context, before embeddings"],
        "locomo_recall@10": pick("R@10", main_rows),
        "locomo_recall@50": pick("R@50", main_rows),
        "locomo_ndcg@10": pick("nDCG@10", main_rows),
        "locomo_mrr": pick("MRR", main_rows),
        "locomo_context_recall@10": pick("R@10", [n for n in results if n.startswith("ctx")]),
        "locomo_p50_ms": {n: round(v, 2) for n, v in took.items()},
        "seconds": round(total, 1),
    }
    for mode, m in live.items():
        headline[f"locomo_live_{mode.replace(', ', '_').replace(' ', '_')}_recall@10"] = round(
            m["R@10"], 4)
    if mbank:
        for lang, r in mbank.items():
            headline[f"memorybank_{lang}_hit@5"] = {
                n: round(v["hit@5"], 4) for n, v in r["profiles"].items()}
    if cmrc:
        headline["cmrc_recall@1"] = {n: round(m["R@1"], 4) for n, m in cmrc.items()}
        headline["cmrc_recall@10"] = {n: round(m["R@10"], 4) for n, m in cmrc.items()}
        headline["cmrc_mrr@10"] = {n: round(m["MRR@10"], 4) for n, m in cmrc.items()}
    results_io.write_headline("quality", title="Retrieval quality: LoCoMo, MemoryBank and CMRC 2018",
                              params=vars(args), headline=headline)
    print(json.dumps(headline))


if __name__ == "__main__":
    main()

