"""What a recall costs while a process builds a large namespace's serving index.

    BENCH_DB_FILE=... BENCH_KEY_PREFIX=... .venv/bin/python bench/recall_building.py \\
        [--docs 100000] [--queries 60] [--data-dir ../shared/data]

On a corpus kept by ``bench/recall.py`` (``BENCH_DB_FILE`` and ``BENCH_KEY_PREFIX`` as it
used them): natural questions answered the two ways a recall can be answered before the
process holds the index, interleaved query by query with the same arguments as a recall:
the postings read in small commands (``search/serving/chunked.py``, what recalls do now) and
``search.lua`` (what they did before), for the ``bm25`` profile's field (top 10) and the
default profile's context field (a window of 100); the caller's wall time, p50 / p99 ms,
and the longest Redis command of each (SLOWLOG, every command). Then each field's index
built from Redis, saved as a snapshot and loaded back (``search/serving/snapshot.py``), in
seconds, with the file's size.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402
from bench.slowlog import every_command  # noqa: E402


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0


def longest(client, run) -> tuple[float, str]:
    """``run()``'s longest Redis command (ms, its first words)."""
    return max(((ms, command[:60]) for ms, command in every_command(client, run)
                if not command.upper().startswith(("SLOWLOG", "CONFIG"))), default=(0.0, ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    deploy = recall_http.Deployment("building")
    if not deploy.kept:
        sys.exit("set BENCH_DB_FILE and BENCH_KEY_PREFIX to a corpus kept by bench/recall.py")
    deploy.setup_django()
    from django.conf import settings

    from memories import store
    from search.index import fields, postings
    from search.memory_search import query_terms
    from search.models import RankingProfile
    from search.serving import chunked, feed, snapshot

    client = store.get_client()
    _, info = recall_corpus.build(args.data_dir, args.docs)
    questions = recall_corpus.questions(args.data_dir, info, n=args.queries)
    ns = "bench-big"
    reads, builds = [], []
    ways = {"chunked": chunked.search_field, "search.lua": postings.search_field}
    for prof, k in ((RankingProfile.objects.get(name="bm25"), 10),
                    (RankingProfile.objects.get(is_default=True), 100)):
        field = fields.content_field(stemming=prof.stemming, context=prof.context)
        ms = {way: [] for way in ways}

        def one(way, q, field=field, prof=prof, k=k, ms=ms):
            started = time.perf_counter()
            ways[way](client, user_id=ns, field=field, terms=query_terms(q, prof), k=k,
                      k1=prof.k1, b=prof.b, mode="any", now=time.time())
            ms[way].append((time.perf_counter() - started) * 1000)

        slow = {}
        for i, q in enumerate(questions):  # interleaved, the order alternating
            order = list(ways) if i % 2 else list(reversed(ways))
            for way in order:
                got = longest(client, lambda way=way, q=q: one(way, q))
                slow[way] = max(slow.get(way, (0.0, "")), got)
        for way in ways:
            print(f"{field} (k={k}) {way:<10} p50 {pct(ms[way], 50):7.1f}  p99 "
                  f"{pct(ms[way], 99):7.1f} ms; longest command {slow[way][0]:.2f} ms "
                  f"({slow[way][1]})")
            reads.append([f"{field} (k={k})", way, round(pct(ms[way], 50), 1),
                          round(pct(ms[way], 99), 1), round(slow[way][0], 2), slow[way][1]])
    with tempfile.TemporaryDirectory() as tmp:
        settings.MEMORY_SERVING_SNAPSHOT_DIR = tmp
        for field in ("c", "xs"):
            served = feed.Served()
            started = time.perf_counter()
            feed._build(client, ns, field, served)
            built = time.perf_counter() - started
            started = time.perf_counter()
            snapshot.save(client, ns, field, served.index, gen=served.gen, format=served.format,
                          last_id=served.last_id, added=served.added,
                          purge_count=snapshot.purges(client, ns))
            saved = time.perf_counter() - started
            head = feed.feed_reply(client, ns, field, "0-0", 0)
            started = time.perf_counter()
            loaded = snapshot.load(client, ns, field, head)
            load_s = time.perf_counter() - started
            size = snapshot.path_for(ns, field).stat().st_size / 2**20
            print(f"{field}: built in {built:.2f} s, saved in {saved:.2f} s ({size:.1f} MB), "
                  f"loaded in {load_s:.3f} s ({'ok' if loaded else 'REFUSED'})")
            builds.append([field, round(built, 2), round(saved, 2), round(size, 1),
                           round(load_s, 3), bool(loaded)])
    results_io.write_run(
        "recall_building", params=vars(args),
        title=f"Recalls before the process holds the index, and snapshots, at {args.docs:,}",
        figures=[results_io.table("Caller's wall time (ms) and the longest Redis command",
                                  ["field (k)", "way", "p50", "p99", "longest command ms",
                                   "command"], reads),
                 results_io.table("Build and snapshot, one process alone",
                                  ["field", "built s", "saved s", "snapshot MB", "loaded s",
                                   "loaded"], builds)])


if __name__ == "__main__":
    main()
