"""Recall latency and ingest at one namespace size, as a user meets them, with peers.

    .venv/bin/python bench/recall.py [--docs 100000] [--quick] [--data-dir ../shared/data]

Memories: LoCoMo turns with their context, replicated and perturbed to ``--docs`` in one
namespace, ~5 % Chinese (``bench/recall_corpus.py``), loaded through the bulk service
``memory_create_many`` (production settings, a throw-away SQLite file, Redis database 10 and
a key prefix of the run's own). Query classes: ``natural`` (LoCoMo questions), ``common`` and
``rare`` term pairs, ``chinese`` (CMRC questions). Systems, timed interleaved query by query
in a rotating order, every query ``--repeat`` times:

- ours in-process (``memory_search``, profiles ``bm25``, ``context`` (the default: BM25 over
  content and context, recency, importance, semantic rescoring) and ``context-lexical`` (the
  same without the rescoring, whose cost ``bench/recall_semantic.py`` measures)) and
  through HTTP (``POST /api/v1/recall`` on gunicorn as shipped: memory_console/gunicorn_conf);
- bm25s, tantivy and SQLite FTS5 on the same tokens (the ``bm25`` profile's field) and top 10.

Then: recall under a live writer at ``--writer-rate`` memories/s (ours: ``POST /memories``
through HTTP, from a process of its own, of LoCoMo turns in conversation order, each
building its context and extending the turn before's, in blocks alternating with idle ones;
tantivy: add + commit), the longest Redis command of the recall phases
(SLOWLOG, threshold 0.5 ms, entries of this run's keys; also split into a recall's own
commands and the writer's), ingest through ``POST /import`` and
single ``POST /memories`` with 1, 2, 4 and 8 clients, Redis memory per memory and the serving
index's memory per process. The LAST line is one JSON object with the headline figures.
Scaling: run it once per size (``--docs 10000``, ``100000``, ``300000``). With
``BENCH_DB_FILE`` and ``BENCH_KEY_PREFIX`` set the corpus is kept after the run and, when it
already holds ``--docs`` memories, reused without ingesting again (the ingest figures are then
left out).
"""

import argparse
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402
from bench.recall_peers import Bm25sPeer, Fts5Peer, TantivyPeer  # noqa: E402
from bench.slowlog import SlowLog, every_command, recall_shas  # noqa: E402

NS = "bench-big"
# Recall under a live writer: idle and busy blocks, alternated.
WRITER_BLOCKS = 4


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0


def log(msg):
    print(f"==> {msg}", file=sys.stderr, flush=True)


def ingest(services, items, batch=2000):
    started = time.perf_counter()
    for s in range(0, len(items), batch):
        services.memory_create_many(items=[{"user_id": NS, "importance": 0.5, **it}
                                           for it in items[s:s + batch]])
    return len(items) / (time.perf_counter() - started)


def kept_corpus(data_dir, n_docs):
    """``recall_corpus.build(data_dir, n_docs)``, ingested into ``NS`` unless the namespace
    holds that many already (a kept corpus); Django must be set up."""
    from memories import services
    from memories.models import Memory

    items, info = recall_corpus.build(data_dir, n_docs)
    if Memory.objects.filter(user_id=NS).count() < n_docs:
        log(f"ingesting {n_docs} memories")
        ingest(services, items)
    return items, info


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def interleaved(systems, queries, repeat):
    """``{system: {class: [ms]}}``: each query runs on every system, the order rotated."""
    out = {name: {} for name in systems}
    names = list(systems)
    for rep in range(repeat):
        for i, (cls, q) in enumerate(queries):
            shift = (i + rep) % len(names)
            for name in names[shift:] + names[:shift]:
                ms, _ = timed(lambda name=name, q=q: systems[name](q))
                out[name].setdefault(cls, []).append(ms)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=150, help="per class")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--writer-rate", type=float, default=50.0)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data",
                    help="LoCoMo and CMRC files (default ../shared/data beside the repository)")
    ap.add_argument("--quick", action="store_true", help="10k memories, 40 queries per class")
    ap.add_argument("--no-http", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.docs, args.queries, args.repeat = 10_000, 40, 1

    deploy = recall_http.Deployment("recall")
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from accounts.tokens import token_create
    from memories import services, store
    from memories.errors import IndexRebuilding
    from memories.models import Memory
    from search.index import fields
    from search.memory_search import memory_search, query_terms
    from search.models import RankingProfile
    from search.profile_services import profile_create, profile_settings
    from search.serving import feed

    client = store.get_client()
    log(f"building {args.docs} memories from {args.data_dir}")
    items, info = recall_corpus.build(args.data_dir, args.docs)
    reused = deploy.kept and Memory.objects.filter(user_id=NS).count() >= args.docs
    ingest_rate = redis_per_memory = 0.0
    if reused:  # a kept corpus (BENCH_DB_FILE, BENCH_KEY_PREFIX): timed, not ingested again
        log("the kept corpus already holds the namespace: no ingest, no HTTP ingest phases")
    else:
        before = int(client.info("memory")["used_memory"])
        ingest_rate = ingest(services, items)
        redis_per_memory = (int(client.info("memory")["used_memory"]) - before) / args.docs
        log(f"ingest {ingest_rate:,.0f}/s; Redis {redis_per_memory:,.0f} bytes per memory")

    analyzer = fields.ANALYZERS[fields.CONTENT]
    rows = list(Memory.objects.filter(user_id=NS).values_list("content", flat=True))
    token_lists = [analyzer.tokens(content) for content in rows]
    pairs = recall_corpus.term_pairs(token_lists, n=args.queries)
    queries = ([("natural", q) for q in recall_corpus.questions(args.data_dir, info,
                                                                 n=args.queries)]
               + [("common", q) for q in pairs["common"]] + [("rare", q) for q in pairs["rare"]]
               + [("chinese", q) for q in recall_corpus.chinese_questions(args.data_dir,
                                                                          n=args.queries)])
    random.Random(5).shuffle(queries)

    log("building peers")
    peers = {}
    for cls in (Bm25sPeer, TantivyPeer, Fts5Peer):
        ms, peers[cls.name] = timed(lambda cls=cls: cls(token_lists))
        log(f"  {cls.name} built in {ms / 1000:.1f} s")
    user, _ = User.objects.get_or_create(username="bench-agent")
    user.groups.add(*Group.objects.filter(name="admin"))
    bm25 = RankingProfile.objects.get(name="bm25")
    default = RankingProfile.objects.get(is_default=True)
    # The default profile's lexical part alone (its semantic rescoring off): what issue #12's
    # targets for the context profile measure, the rescoring having its own budget
    # (bench/recall_semantic.py). Saved, so HTTP can name it.
    lexical_name = f"{default.name}-lexical"
    settings = {k: v for k, v in profile_settings(default).items() if k != "name"}
    lexical = RankingProfile.objects.filter(name=lexical_name).first() or profile_create(
        actor=user, name=lexical_name, reason="bench", **{**settings, "w_semantic": 0.0})
    # A process's first recall of each field beside a large namespace: it waits for the
    # index its process loads or builds on a background thread (refused with IndexRebuilding,
    # 503 over HTTP, past MEMORY_SERVING_WAIT_SECONDS: asked again then).
    cold, building = {}, {}
    build_slow = SlowLog(client, deploy.prefix, recall_shas())
    for prof in (bm25, lexical, default):
        started, refused = time.perf_counter(), 0
        while True:
            try:
                memory_search(user_id=NS, query="hello", profile=prof)
                break
            except IndexRebuilding:
                refused += 1
        cold[prof.name] = round(time.perf_counter() - started, 2)
        building[prof.name] = {"refused": refused}
    max_build_cmd, longest_build = build_slow.close()
    log(f"first recall of each field answered in (s): {cold}; refused meanwhile: {building}; "
        f"longest Redis command meanwhile {max_build_cmd:.2f} ms {longest_build}")

    def ours(prof):
        return lambda q: memory_search(user_id=NS, query=q, limit=10, profile=prof)

    def peer(p):
        return lambda q: p.search(query_terms(q, bm25), 10)

    systems = {"ours_bm25": ours(bm25), f"ours_{lexical.name}": ours(lexical),
               f"ours_{default.name}": ours(default),
               **{name: peer(p) for name, p in peers.items()}}
    server, http_build_cmd = None, 0.0
    if not args.no_http:
        server = recall_http.Server(deploy, token_create(user=user))
        server.start()
        server.warm(NS, [q for _, q in queries[:60]])
        # Each process loads or builds its indexes on a first recall, which waits for them
        # (a 503 past MEMORY_SERVING_WAIT_SECONDS): warmed again until none is refused.
        deadline = time.monotonic() + 900
        while True:
            try:
                http_build_cmd = max(http_build_cmd, max((ms for ms, command in every_command(
                    client, lambda: server.warm(NS, [q for _, q in queries[:60]]))
                    if deploy.prefix in command), default=0.0))
                break
            except RuntimeError as exc:  # a 503: a process still loading
                log(f"  warm-up: {exc}")
                if time.monotonic() > deadline:
                    raise
        systems["http_bm25"] = lambda q: server.recall(NS, q, "bm25")
        systems[f"http_{lexical.name}"] = lambda q: server.recall(NS, q, lexical.name)
        systems[f"http_{default.name}"] = lambda q: server.recall(NS, q, None)

    def same_top10(q):
        ours_scores = [h.score for h in memory_search(user_id=NS, query=q, limit=10,
                                                      profile=bm25).results]
        terms = query_terms(q, bm25)
        p = peers["bm25s"]
        ids = [p.vocab[t] for t in terms if t in p.vocab]
        theirs = sorted(p.retriever.get_scores(ids), reverse=True)[:len(ours_scores)] if ids else []
        # bm25s scores in float32: equal to ~1e-6 relative.
        return len(theirs) == len(ours_scores) and all(
            abs(a - b) <= 1e-5 * max(1.0, a) for a, b in zip(ours_scores, theirs, strict=True))

    agree = sum(1 for _, q in queries if same_top10(q))
    slow = SlowLog(client, deploy.prefix, recall_shas())
    log(f"timing {len(queries)} queries x {len(systems)} systems x {args.repeat}")
    # One untimed pass first: a process's first use of a part (a time expression's parser
    # data, a profile's field) is a one-off, not what a recall costs.
    interleaved(systems, queries[:60], 1)
    times = interleaved(systems, queries, args.repeat)

    writer = {}
    subset = [qc for qc in queries if qc[0] in ("natural", "common")][:100]
    watch = {k: systems[k] for k in systems if k.startswith(("ours_", "http_"))}
    idle, busy = {k: {} for k in watch}, {k: {} for k in watch}

    def into(out, got):
        for k, by in got.items():
            for cls, ms in by.items():
                out[k].setdefault(cls, []).extend(ms)

    if server is not None:
        # Realistic turns in conversation order, into conversations of their own, from a
        # process of its own. Idle and busy alternate in blocks of the same queries, so a
        # change of the machine's load during the run falls on both.
        live, _ = recall_corpus.build(args.data_dir, 2000, seed=98, shuffle=False)
        # How this process's searches were answered under the writer: in one round trip
        # with nothing written since (fast), in one that brought writes (caught), and the
        # stream entries applied.
        served = dict.fromkeys(("fast", "caught", "applied"), 0)
        with server.writer(NS, args.writer_rate, live) as pen:
            for block in range(WRITER_BLOCKS):
                part = subset[block::WRITER_BLOCKS]
                into(idle, interleaved(watch, part, 1))
                pen.on()
                time.sleep(0.5)  # the writer at its rate before the first timed recall
                before = dict(vars(feed.counters))
                into(busy, interleaved(watch, part, 1))
                for k in served:
                    served[k] += vars(feed.counters)[k] - before[k]
                pen.off()
                time.sleep(0.5)  # its last writes drained
        stats = pen.stats
        writer["inproc_served"] = served
        writer["ours_writes_per_s"] = stats["rate"]
        writer["ours_write_p50_ms"] = pct(stats["ms"], 50)
        for k in watch:
            a = [v for vs in idle[k].values() for v in vs]
            b = [v for vs in busy[k].values() for v in vs]
            writer[k] = {"idle_p50": pct(a, 50), "busy_p50": pct(b, 50),
                         "idle_p99": pct(a, 99), "busy_p99": pct(b, 99)}
    tv = peers["tantivy"]
    stop = threading.Event()

    def tantivy_writer():
        n = 0
        while not stop.is_set():
            tv.add(token_lists[n % len(token_lists)] + ["live"])
            n += 1
            time.sleep(1 / args.writer_rate)

    thread = threading.Thread(target=tantivy_writer)
    thread.start()
    tv_busy = interleaved({"tantivy": systems["tantivy"]}, subset, 1)["tantivy"]
    stop.set()
    thread.join()
    writer["tantivy_busy_natural_p50"] = pct(tv_busy.get("natural", []), 50)
    max_cmd, longest = slow.close()

    held = feed.held_bytes()
    ingest_http = {}
    if server is not None and not reused:
        extra, _ = recall_corpus.build(args.data_dir, 4000, seed=99)
        ingest_http["import_per_s"] = server.import_rate("bench-import", extra)
        ingest_http["create_small_1"] = server.create_rate("bench-small", 1, 3.0)
        for n in (1, 2, 4, 8):
            ingest_http[f"create_big_{n}"] = server.create_rate(NS, n, 4.0)
    if server is not None:
        ingest_http["rss_mb"] = server.worker_rss_mb()
        server.stop()

    print(f"\n{args.docs:,} memories in one namespace; {len(queries)} queries x {args.repeat}")
    print(f"ingest (memory_create_many) {ingest_rate:,.0f}/s; Redis {redis_per_memory:,.0f} "
          f"bytes per memory; serving index held in this process {held / 2**20:.1f} MB; "
          f"build time (s) {cold}")
    print(f"bm25 top-10 scores equal to bm25s's: {agree}/{len(queries)}")
    classes = ("natural", "common", "rare", "chinese")
    print(f"{'system':<16}" + "".join(f"{c + ' p50/p99':>22}" for c in classes))
    for name, by in times.items():
        print(f"{name:<16}" + "".join(
            f"{pct(by.get(c, []), 50):>11.2f}{pct(by.get(c, []), 99):>11.2f}" for c in classes))
    print(f"under a live writer: {json.dumps(writer)}")
    print(f"longest Redis command of this run: {max_cmd:.2f} ms {longest}; by kind "
          f"(a recall's own, the writer's and the rest): {slow.by_kind}")
    print(f"HTTP ingest: {json.dumps(ingest_http)}")
    http = f"http_{default.name}" if server is not None else f"ours_{default.name}"
    result = {
        "n_docs": args.docs, "queries_per_class": args.queries, "repeat": args.repeat,
        "corpus_reused": reused, "load_average": [round(x, 1) for x in os.getloadavg()],
        "headline_system": http,
        "natural_p50_ms": round(pct(times[http]["natural"], 50), 3),
        "natural_p99_ms": round(pct(times[http]["natural"], 99), 3),
        "common_p99_ms": round(pct(times[http]["common"], 99), 3),
        "chinese_p99_ms": round(pct(times[http]["chinese"], 99), 3),
        # The headline profile without its semantic rescoring (#12's context targets).
        **({f"lexical_{c}_p{p}_ms": round(pct(times[f"http_{lexical.name}"][c], p), 3)
            for c, p in (("natural", 50), ("natural", 99), ("common", 99), ("chinese", 99))}
           if server is not None else {}),
        "inproc_bm25_natural_p50_ms": round(pct(times["ours_bm25"]["natural"], 50), 3),
        "inproc_bm25_natural_p99_ms": round(pct(times["ours_bm25"]["natural"], 99), 3),
        "tantivy_natural_p50_ms": round(pct(times["tantivy"]["natural"], 50), 3),
        "bm25s_natural_p50_ms": round(pct(times["bm25s"]["natural"], 50), 3),
        "fts5_natural_p50_ms": round(pct(times["fts5"]["natural"], 50), 3),
        "max_redis_command_ms": round(max_cmd, 3),
        "max_redis_recall_command_ms": round(slow.by_kind["recall"], 3),
        "max_redis_write_command_ms": round(slow.by_kind["write"], 3),
        "ingest_per_s": round(ingest_rate),
        "import_per_s": round(ingest_http.get("import_per_s", 0)),
        "api_create_per_s": round(ingest_http.get("create_big_4", 0)),
        "redis_bytes_per_memory": round(redis_per_memory),
        "serving_index_mb": round(held / 2**20, 1),
        "top10_equal_bm25s": f"{agree}/{len(queries)}",
        "serving_build_s": cold,
        # A process's first recall of each field (waiting for its index): the times it was
        # refused, and the longest Redis command of this run's keys meanwhile, in-process
        # and while the HTTP workers loaded theirs (their warm-up).
        "building_recall": building,
        "max_redis_command_building_ms": round(max_build_cmd, 3),
        "max_redis_command_http_warmup_ms": round(http_build_cmd, 3) if server else None,
        "writer": writer,
    }
    results_io.write_headline("recall", title=f"Recall latency at {args.docs:,} memories",
                              params=vars(args), headline=result)
    print(json.dumps(result), flush=True)
    deploy.cleanup()
    os._exit(0)  # skip the peers' slow destructors


if __name__ == "__main__":
    main()
