"""Many small namespaces in one process: what each costs held, and recall as their number grows.

    .venv/bin/python bench/namespaces.py [--namespaces 10000] [--per 5] [--quick]

Memories: LoCoMo turns with their context (``bench/recall_corpus.py``), ``--per`` to each of
``--namespaces`` namespaces, loaded through the bulk service (production settings, a throw-away
SQLite file and key prefix; ``bench/recall_http.Deployment``). Then, in this one process, in a
shuffled order: a first recall of every namespace (it builds that namespace's serving index:
``cold``), then a second pass (``warm``), each with a LoCoMo question through ``memory_search``
(profile ``bm25`` and the default). Reported: recall p50 / p99 (ms) of the first and last
tenth of each pass (does a recall slow down as the process holds more namespaces?), the bytes
the serving indexes hold (``feed.held_bytes``) and the process's RSS growth per namespace, and
evictions under ``MEMORY_SERVING_BUDGET_MB``. The LAST line is one JSON object.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def log(msg):
    print(f"==> {msg}", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--namespaces", type=int, default=10_000)
    ap.add_argument("--per", type=int, default=5, help="memories per namespace")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--quick", action="store_true", help="1,000 namespaces")
    args = ap.parse_args()
    if args.quick:
        args.namespaces = 1_000

    deploy = recall_http.Deployment("namespaces")
    deploy.setup_django()
    from memories import services
    from search.memory_search import memory_search
    from search.serving import feed

    names = [f"tenant-{n:05d}" for n in range(args.namespaces)]
    items, info = recall_corpus.build(args.data_dir, args.namespaces * args.per)
    log(f"loading {len(items)} memories into {len(names)} namespaces")
    started = time.perf_counter()
    for s in range(0, len(items), 2000):
        services.memory_create_many(items=[
            {"user_id": names[(s + i) % len(names)], "importance": 0.5,
             **{k: v for k, v in it.items() if k != "conversation_id"}}
            for i, it in enumerate(items[s:s + 2000])])
    log(f"ingest {len(items) / (time.perf_counter() - started):,.0f} memories/s")
    questions = recall_corpus.questions(args.data_dir, info, n=500)
    rng = random.Random(7)

    def one_pass(label):
        order = names[:]
        rng.shuffle(order)
        times = {"bm25": [], "default": []}
        cpu = {"bm25": [], "default": []}
        rss0, held0 = rss_mb(), feed.held_bytes()
        for i, ns in enumerate(order):
            q = rng.choice(questions)
            for prof, name in (("bm25", "bm25"), (None, "default")):
                t, c = time.perf_counter(), time.thread_time()
                memory_search(user_id=ns, query=q, limit=10, profile=prof)
                times[name].append((time.perf_counter() - t) * 1000)
                cpu[name].append((time.thread_time() - c) * 1000)
            if (i + 1) % max(1, len(order) // 10) == 0:
                log(f"  {label} {i + 1}: held {feed.held_bytes() / 2**20:.1f} MB, "
                    f"RSS {rss_mb():.0f} MB, evictions {feed.counters.evictions}")
        tenth = max(1, len(order) // 10)
        out = {}
        for name, ts in times.items():
            out[name] = {"first_tenth_p50_ms": round(pct(ts[:tenth], 50), 3),
                         "first_tenth_p99_ms": round(pct(ts[:tenth], 99), 3),
                         "last_tenth_p50_ms": round(pct(ts[-tenth:], 50), 3),
                         "last_tenth_p99_ms": round(pct(ts[-tenth:], 99), 3),
                         # CPU time of the recalling thread: what the machine's load does not add
                         "first_tenth_cpu_p50_ms": round(pct(cpu[name][:tenth], 50), 3),
                         "last_tenth_cpu_p50_ms": round(pct(cpu[name][-tenth:], 50), 3)}
        out["rss_growth_mb"] = round(rss_mb() - rss0, 1)
        out["held_growth_mb"] = round((feed.held_bytes() - held0) / 2**20, 2)
        return out

    rss_before = rss_mb()
    cold = one_pass("cold")
    warm = one_pass("warm")
    held = feed.held_bytes()
    summary = {
        "namespaces": len(names), "memories_per_namespace": args.per,
        "cold": cold, "warm": warm,
        "held_mb": round(held / 2**20, 1),
        "held_bytes_per_namespace": round(held / len(names)),
        "rss_growth_per_namespace_kb": round((rss_mb() - rss_before) * 1024 / len(names), 1),
        "evictions": feed.counters.evictions,
    }
    results_io.write_headline("namespaces", title=f"{args.namespaces:,} namespaces of {args.per} "
                              "memories", params=vars(args), headline=summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
