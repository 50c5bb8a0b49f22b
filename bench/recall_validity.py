"""What the validity filter costs a recall in the serving index (in-process, pure engine).

    .venv/bin/python bench/recall_validity.py [--docs 100000] [--ended 0.05] [--runs 5]
                                              [--data-dir ../shared/data]

One serving index (``search.serving.engine.FieldIndex``) of ``--docs`` LoCoMo turns with
their context (``bench/recall_corpus.py``, the default profile's field), a share ``--ended``
of them superseded at random moments. LoCoMo questions (``recall_corpus.questions``), top 10,
timed interleaved query by query: no validity filter (``valid=None``, what
``include_superseded`` asks), valid now (every recall's default) and as of a moment (``(t,
t)``). Median over ``--runs`` runs of each way's p50 and p99, as the LAST line (JSON) and as a
run file in ``bench/results/`` (``bench/results_io.py``).
"""

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import results_io  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--ended", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    from bench import recall_corpus
    from search.index import fields
    from search.serving.engine import Doc, FieldIndex

    field = fields.content_field(stemming=True, context=True)
    analyzer_terms = fields.field_term_frequencies
    items, info = recall_corpus.build(args.data_dir, args.docs)
    rng = random.Random(5)
    now = 1_800_000_000.0
    docs = []
    for n, item in enumerate(items):
        tf = analyzer_terms(item["content"], item["context"])[field]
        vf = now - rng.uniform(0, 3e7)
        vu = rng.uniform(vf, now) if rng.random() < args.ended else math.inf
        docs.append(Doc(f"m{n:07d}", sum(tf.values()), tf, vf=vf, vu=vu))
    index = FieldIndex(docs)
    analyzer = fields.ANALYZERS[field]
    queries = [list(dict.fromkeys(analyzer.tokens(q)))
               for q in recall_corpus.questions(args.data_dir, info, n=args.queries)]
    queries = [q for q in queries if q]
    ways = {"all": None, "now": (now, math.inf), "as_of": (now - 1.5e7, now - 1.5e7)}
    per_way = {w: [] for w in ways}
    for _ in range(args.runs):
        times = {w: [] for w in ways}
        order = list(ways)
        for terms in queries:
            rng.shuffle(order)
            for way in order:
                t0 = time.perf_counter()
                index.search(terms, k=10, mode="any", valid=ways[way])
                times[way].append((time.perf_counter() - t0) * 1000)
        for way, ms in times.items():
            ms.sort()
            per_way[way].append((statistics.median(ms), ms[int(len(ms) * 0.99) - 1]))
    out = {"docs": args.docs, "ended": args.ended, "queries": len(queries), "runs": args.runs}
    for way, rows in per_way.items():
        out[f"{way}_p50_ms"] = round(statistics.median(r[0] for r in rows), 3)
        out[f"{way}_p99_ms"] = round(statistics.median(r[1] for r in rows), 3)
    rows = [["every fact (`include_superseded`)", out["all_p50_ms"], out["all_p99_ms"]],
            ["valid now (default)", out["now_p50_ms"], out["now_p99_ms"]],
            ["as of a moment", out["as_of_p50_ms"], out["as_of_p99_ms"]]]
    results_io.write_run(
        "recall_validity", params=vars(args),
        title=f"The serving index's validity filter at {out['docs']:,} memories (in-process engine)",
        figures=[results_io.table(f"Top 10, median of {out['runs']} runs", ["recall", "p50 ms", "p99 ms"], rows)],
        notes="In-process engine only (no Redis round trip, no database check).")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
