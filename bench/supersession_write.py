"""What supersession proposals cost a create, at 100k memories in one namespace.

    .venv/bin/python bench/supersession_write.py [--docs 100000] [--facts 20000]
                                                 [--writes 200] [--runs 5]
                                                 [--data-dir ../shared/data]

The namespace holds ``--docs`` memories: LoCoMo turns (``bench/recall_corpus.py``) and
``--facts`` fact statements of the kinds agents store (where people live and work, which
their phone numbers), written through ``memory_create_many`` (each
fact's slots recorded, as every write records them). Then ``memory_create`` in-process, one
memory at a time, three ways interleaved (each run writes ``--writes`` memories per way, in
turn): ``before`` (the proposals' step skipped entirely, as a create was before validity:
``conflicts.propose`` replaced by a no-op for those writes), ``off`` (slots recorded, nothing
proposed) and ``propose``; half the writes are new values of held slots (each proposes a
supersession), half new turns (no slot). The median over ``--runs`` runs of each mode's p50
and p99, and of the import rate, is written as the LAST line (one JSON object) and as a run
file in ``bench/results/`` (``bench/results_io.py``).
"""

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _django, results_io  # noqa: E402

USER = "bench-facts"
SYLLABLES = ("ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "ba", "po", "li", "fe",
             "gu", "zo", "ya")


def person(n: int) -> str:
    """A first name of its own for each ``n`` < 16**4 ("Kalomira")."""
    parts = [SYLLABLES[(n >> shift) & 15] for shift in (12, 8, 4, 0)]
    return "".join(parts).capitalize()

CITIES = ["Porto", "Madrid", "Berlin", "Lisbon", "Oslo", "Lyon", "Turin", "Gdansk", "Leeds",
          "Kyoto", "Austin", "Quito"]
COMPANIES = ["Initech", "Globex", "Hooli", "Umbrella", "Vandelay", "Stark", "Wayne", "Acme"]


def fact(rng: random.Random, n: int) -> str:
    """One fact statement; ``n`` varies the subject so slots are many and each is held a
    few times."""
    kind = rng.randrange(3)
    if kind == 0:
        return f"{person(n)} lives in {rng.choice(CITIES)}."
    if kind == 1:
        return f"{person(n)} works at {rng.choice(COMPANIES)} as an engineer."
    return f"{person(n)}'s phone number is +44 7700 {rng.randint(100000, 999999)}."


def change(rng: random.Random, n: int) -> str:
    return f"{person(n)} moved to {rng.choice(CITIES)}, flat {rng.randint(1, 10**6)}."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=20_000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    _django.setup("supersession-write")
    from bench import recall_corpus
    from memories import services
    from memories.models import Conflict, MemorySlot
    from memories.services import conflicts

    rng = random.Random(1)
    turns, _ = recall_corpus.build(args.data_dir, args.docs - args.facts)
    items = [{"user_id": USER, **t} for t in turns]
    items += [{"user_id": USER, "content": fact(rng, n)} for n in range(args.facts)]
    rng.shuffle(items)
    started = time.perf_counter()
    for start in range(0, len(items), 2000):
        services.memory_create_many(items=items[start:start + 2000], supersession="off")
    import_rate = len(items) / (time.perf_counter() - started)
    print(f"==> {len(items)} memories, {MemorySlot.objects.count()} slots, "
          f"{import_rate:.0f}/s", file=sys.stderr)
    modes = ("before", "off", "propose")
    spare = iter(recall_corpus.build(args.data_dir, args.writes * args.runs * 3, seed=7)[0])
    per_mode = {m: [] for m in modes}
    real_propose = conflicts.propose
    for run in range(args.runs):
        times = {m: [] for m in modes}
        for i in range(args.writes * len(modes)):
            mode = modes[i % len(modes)]
            conflicts.propose = (lambda *a, **k: []) if mode == "before" else real_propose
            if (i // len(modes)) % 2:
                content = change(rng, rng.randrange(args.facts))
            else:
                content = f"{next(spare)['content']} ({run}-{i})"
            t0 = time.perf_counter()
            services.memory_create(user_id=USER, content=content,
                                   supersession="off" if mode == "before" else mode)
            times[mode].append((time.perf_counter() - t0) * 1000)
        for mode, ms in times.items():
            ms.sort()
            per_mode[mode].append((statistics.median(ms), ms[int(len(ms) * 0.99) - 1]))
        print(f"==> run {run + 1}: " + ", ".join(
            f"{m} p50 {per_mode[m][-1][0]:.2f} ms" for m in per_mode), file=sys.stderr)
    out = {"docs": len(items), "facts": args.facts, "writes_per_mode_run": args.writes,
           "runs": args.runs, "import_per_s": round(import_rate),
           "proposals": Conflict.objects.count()}
    for mode, rows in per_mode.items():
        out[f"{mode}_p50_ms"] = round(statistics.median(r[0] for r in rows), 3)
        out[f"{mode}_p99_ms"] = round(statistics.median(r[1] for r in rows), 3)
    out["added_p50_ms"] = round(out["propose_p50_ms"] - out["before_p50_ms"], 3)
    out["added_p99_ms"] = round(out["propose_p99_ms"] - out["before_p99_ms"], 3)
    _report(out, vars(args))
    print(json.dumps(out))


def _report(out: dict, params: dict) -> None:
    ways = [["before (no slots, no proposals)", out["before_p50_ms"], out["before_p99_ms"]],
            ["off (slots recorded)", out["off_p50_ms"], out["off_p99_ms"]],
            ["propose", out["propose_p50_ms"], out["propose_p99_ms"]]]
    added = [["p50 ms", out["added_p50_ms"]], ["p99 ms", out["added_p99_ms"]],
             ["proposals written", out["proposals"]],
             ["bulk import rate while building, /s", out["import_per_s"]]]
    results_io.write_run(
        "supersession_write", params=params,
        title=f"Supersession proposals on create at {out['docs']:,} memories (in-process, SQLite)",
        figures=[results_io.table(f"Median of {out['runs']} runs", ["way", "p50 ms", "p99 ms"], ways),
                 results_io.table("Added to a create (propose against before)",
                                  ["measure", "value"], added)])


if __name__ == "__main__":
    main()
