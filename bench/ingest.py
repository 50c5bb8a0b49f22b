"""Write-path throughput and Redis cost per memory, as a user meets them.

    .venv/bin/python bench/ingest.py [--docs 100000] [--quick] [--data-dir ../shared/data]
                                     [--clients 1,2,4,8] [--seconds 8] [--import-docs 10000]
                                     [--skip-import] [--skip-size] [--small-too] [--user-wide]

Memories are LoCoMo turns replicated and perturbed (``bench/recall_corpus.py``: realistic
lengths, ~5 % Chinese). Production settings, a throw-away SQLite file, gunicorn as shipped
(``memory_console/gunicorn_conf.py``), Redis database 10 (``BENCH_REDIS_URL``) with a key
prefix of the run's own. Phases, each figure with the load average (1 min) when it ended:

1. **bulk service**: ``memory_create_many`` in batches of 2,000 (with context, as
   ``import_locomo`` stores it) up to ``--docs`` in one namespace; Redis ``used_memory`` per
   memory after it, and by key kind (``MEMORY USAGE`` of a sample of each kind's keys);
2. **POST /import** (merge) of ``--import-docs`` memories in documents of 1,000 into a
   namespace of their own, and into the big one; the longest Redis command meanwhile
   (SLOWLOG, threshold 0.5 ms, this run's keys);
3. **POST /memories**, one memory per request, with 1, 2, 4, 8 concurrent clients (threads
   with keep-alive connections), each client writing turns of its own conversation without
   a context (the server builds it from the conversation), into the big namespace and into a
   small one, after 2 s of 8 clients untimed (every process warmed: its scripts loaded and
   its serving index built; the warm-up recall takes the ``bm25`` profile, so no process
   loads the sentence encoder during the curve); then with 4 clients into namespaces of
   100 and of ``--docs`` memories one after the other, twice (the namespace-size check).
   ``--user-wide``: the curve's creates carry no conversation (no window of neighbours, no
   server-built context), as an agent's user-wide facts are written.

Read-your-writes is checked on the way: after every 50th create the client recalls the
memory's own words in the same namespace and expects it in the top 10. The LAST line is
one JSON object with the headline figures.
"""

import argparse
import json
import os
import random
import secrets
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402
from bench.load_server import redis_cpu_seconds, server_cpu_seconds  # noqa: E402
from bench.slowlog import SlowLog  # noqa: E402

BIG, SMALL = "ingest-big", "ingest-small"


def log(msg):
    print(f"==> {msg}", file=sys.stderr, flush=True)


def load1() -> float:
    return round(os.getloadavg()[0], 1)


def service_ingest(services, ns, items, batch=2000) -> float:
    started = time.perf_counter()
    for s in range(0, len(items), batch):
        services.memory_create_many(items=[{"user_id": ns, "importance": 0.5, **it}
                                           for it in items[s:s + batch]])
    return len(items) / (time.perf_counter() - started)


KINDS = (("hash", ":m:"), ("doc vectors", ":d:"), ("postings", ":t:"))


def redis_breakdown(client, prefix: str, ns_base: str, sample: int = 400) -> dict:
    """Bytes per key kind of one namespace, from MEMORY USAGE of up to ``sample`` keys of
    each kind (scaled by the kind's key count) and of every other key."""
    rng = random.Random(7)
    counts, sampled = {}, {}
    others = 0
    for key in client.scan_iter(match=f"{ns_base}*", count=5000):
        k = key.decode() if isinstance(key, bytes) else key
        kind = next((name for name, mark in KINDS if mark in k), None)
        if kind is None:
            others += int(client.memory_usage(key) or 0)
            continue
        counts[kind] = counts.get(kind, 0) + 1
        bucket = sampled.setdefault(kind, [])
        if len(bucket) < sample:
            bucket.append(key)
        elif rng.random() < sample / counts[kind]:
            bucket[rng.randrange(sample)] = key
    out = {}
    for kind, keys in sampled.items():
        sizes = [int(client.memory_usage(k, samples=0) or 0) for k in keys]
        out[kind] = int(sum(sizes) / len(sizes) * counts[kind])
    out["other keys (ids, ver, docs, terms, stats, stream)"] = others
    out["keys"] = counts
    return out


def turn_streams(items: list[dict], clients: int, seed: int) -> list[list[str]]:
    """Per client, the turns of whole conversations in order (a live agent's writes)."""
    by_conv: dict[str, list[str]] = {}
    for it in items:
        by_conv.setdefault(it["conversation_id"] or "zh", []).append(it["content"])
    convs = list(by_conv.values())
    random.Random(seed).shuffle(convs)
    streams = [[] for _ in range(clients)]
    for n, turns in enumerate(convs):
        streams[n % clients].extend(turns)
    return streams


def create_rate(server, ns: str, streams: list[list[str]], seconds: float,
                check_every: int = 50, user_wide: bool = False) -> dict:
    """Single creates per second with ``len(streams)`` concurrent clients; each client
    writes its turns into a conversation of its own run (``user_wide``: without a
    conversation), then checks read-your-writes."""
    clients = len(streams)
    counts, ms, misses = [0] * clients, [], []
    run_tag = secrets.token_hex(3)
    deadline = time.perf_counter() + seconds

    def run(c):
        turns = streams[c]
        while time.perf_counter() < deadline and counts[c] < len(turns):
            text = f"{turns[counts[c]]} {run_tag}{c}"
            t = time.perf_counter()
            body = {"user_id": ns, "content": text}
            if not user_wide:
                body["conversation_id"] = f"live-{run_tag}-{c}"
            out = server.post("/memories", body)
            ms.append((time.perf_counter() - t) * 1000)
            counts[c] += 1
            if counts[c] % check_every == 0:
                hits = server.post("/recall", {"user_id": ns, "query": text, "limit": 10,
                                               "profile": "bm25"})["results"]
                if out["memory_id"] not in [h["memory_id"] for h in hits]:
                    misses.append(out["memory_id"])

    cpu0 = server_cpu_seconds(server.proc.pid)
    ccpu0 = time.process_time()  # this process: the clients' threads
    rcpu0 = redis_cpu_seconds(server.deploy.env["REDIS_URL"])
    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    n = max(1, sum(counts))
    cpu = (server_cpu_seconds(server.proc.pid) - cpu0) / n * 1000
    rcpu = (redis_cpu_seconds(server.deploy.env["REDIS_URL"]) - rcpu0) / n * 1000
    ccpu = (time.process_time() - ccpu0) / n * 1000
    ms.sort()
    return {"per_s": round(sum(counts) / elapsed, 1), "n": sum(counts),
            "server_cpu_ms": round(cpu, 2), "redis_cpu_ms": round(rcpu, 2),
            "client_cpu_ms": round(ccpu, 2),
            "p50_ms": round(ms[len(ms) // 2], 1) if ms else None,
            "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1) if ms else None,
            "ryw_misses": len(misses), "load1": load1()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--import-docs", type=int, default=10_000)
    ap.add_argument("--clients", default="1,2,4,8")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--quick", action="store_true", help="10k memories, 4k imported, 5 s each")
    ap.add_argument("--skip-import", action="store_true")
    ap.add_argument("--skip-size", action="store_true", help="no namespace-size check")
    ap.add_argument("--small-too", action="store_true",
                    help="the curve into a small namespace as well")
    ap.add_argument("--user-wide", action="store_true",
                    help="the curve's creates without a conversation (no window, no context)")
    args = ap.parse_args()
    if args.quick:
        args.docs, args.import_docs, args.seconds = 10_000, 4_000, 5.0

    deploy = recall_http.Deployment("ingest")
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from accounts.tokens import token_create
    from memories import services, store

    client = store.get_client()
    result = {"n_docs": args.docs, "load1_start": load1()}
    log(f"building {args.docs} memories from {args.data_dir}")
    items, _ = recall_corpus.build(args.data_dir, args.docs)
    before = int(client.info("memory")["used_memory"])
    rate = service_ingest(services, BIG, items)
    used = int(client.info("memory")["used_memory"]) - before
    result["service_per_s"], result["service_load1"] = round(rate), load1()
    result["redis_bytes_per_memory"] = round(used / args.docs)
    breakdown = redis_breakdown(client, deploy.prefix, store.namespace_base(BIG))
    result["redis_breakdown_per_memory"] = {
        k: (round(v / args.docs) if isinstance(v, int) else v) for k, v in breakdown.items()}
    log(f"memory_create_many {rate:,.0f}/s; Redis {used / args.docs:,.0f} B per memory "
        f"{result['redis_breakdown_per_memory']}")

    user = User.objects.create_user("bench-agent")
    user.groups.add(*Group.objects.filter(name="admin"))
    server = recall_http.Server(deploy, token_create(user=user))
    server.start()
    try:
        server.post("/recall", {"user_id": BIG, "query": "warm up", "limit": 1,
                                "profile": "bm25"})
        extra, _ = recall_corpus.build(args.data_dir, 2 * args.import_docs, seed=99)
        slow = SlowLog(client, deploy.prefix)
        for ns, part in (() if args.skip_import else
                         (("ingest-import", extra[:args.import_docs]),
                          (BIG, extra[args.import_docs:]))):
            rate = server.import_rate(ns, part)
            result[f"import_per_s_{'own' if ns != BIG else 'big'}"] = round(rate)
            result[f"import_load1_{'own' if ns != BIG else 'big'}"] = load1()
            log(f"POST /import into {ns}: {rate:,.0f}/s (load {load1()})")
        result["import_max_redis_command_ms"], longest = slow.close()
        log(f"longest Redis command while importing: {longest}")

        live, _ = recall_corpus.build(args.data_dir, 20_000, seed=123)
        live = [it for it in live if it["conversation_id"]]
        # Untimed: every process gets requests (its first create loads the scripts, its
        # first recall builds its serving index), so the curve's first points do not carry
        # one-off costs the later ones do not.
        create_rate(server, BIG, turn_streams(live, 8, seed=7), 2.0, check_every=5)
        curve = {}
        for n in (int(c) for c in args.clients.split(",")):
            for ns in (BIG, SMALL) if args.small_too else (BIG,):
                streams = turn_streams(live, n, seed=n)
                got = create_rate(server, ns, streams, args.seconds,
                                  user_wide=args.user_wide)
                curve[f"{ns}_{n}"] = got
                log(f"POST /memories {ns} {n} clients: {got}")
        result["create_curve"] = curve
        size = {}
        for rnd in range(0 if args.skip_size else 2):
            for ns in ("ingest-hundred", BIG):
                if rnd == 0 and ns == "ingest-hundred":
                    services.memory_create_many(items=[{"user_id": ns, **it}
                                                       for it in items[:100]])
                got = create_rate(server, ns, turn_streams(live, 4, seed=40 + rnd),
                                  args.seconds)
                size.setdefault(ns, []).append(got)
                log(f"size check {ns}: {got}")
        result["size_check"] = size
        result["rss_mb"] = server.worker_rss_mb()
    finally:
        server.stop()
    result["api_create_per_s"] = curve.get(f"{BIG}_4", {}).get("per_s")
    result["import_per_s"] = result.get("import_per_s_big")
    results_io.write_headline("ingest", title="The write path: bulk, POST /import, POST /memories",
                              params=vars(args), headline=result)
    print(json.dumps(result), flush=True)
    deploy.cleanup()
    os._exit(0)


if __name__ == "__main__":
    main()
