"""Bulk ingest through ``POST /import``, as a user meets it, and where its time goes.

    .venv/bin/python bench/import_rate.py [--docs 20000] [--rounds 2] [--per-request 1000]
                                          [--posters 1] [--data-dir ../shared/data]

Memories are LoCoMo turns with their three-turn context (``bench/recall_corpus.py``: realistic
lengths, ~5 % Chinese), posted as merge imports of ``--per-request`` memories (the body limit
is ~2.5 MB; ``--posters`` documents in flight at once) to gunicorn as shipped (``memory_console/gunicorn_conf.py``), production settings,
a throw-away SQLite file, the Redis of ``BENCH_REDIS_URL`` (default database 10; point it at a
database or server of your own) under a key prefix of the run's own. Each round imports
``--docs`` memories into a namespace of its own, so rounds are alike; a round reports
memories per second, gunicorn and Redis CPU per memory, Redis commands per memory by name
(``INFO commandstats``: server-wide, so other users of the server count too), the longest
Redis command meanwhile (SLOWLOG of this run's keys) and the load average (1 min) at its end.
The LAST line is one JSON object with every round.
"""

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402
from bench.load_server import redis_cpu_seconds, server_cpu_seconds  # noqa: E402
from bench.slowlog import SlowLog  # noqa: E402


def log(msg):
    print(f"==> {msg}", file=sys.stderr, flush=True)


def command_stats(client) -> dict[str, tuple[int, int]]:
    """``{command: (calls, usec)}`` from ``INFO commandstats``."""
    out = {}
    for name, row in client.info("commandstats").items():
        out[name.removeprefix("cmdstat_")] = (int(row["calls"]), int(row["usec"]))
    return out


def stats_delta(before, after, n: int) -> dict[str, dict]:
    """Commands per memory and their µs per memory, the costliest first."""
    rows = {}
    for name, (calls, usec) in after.items():
        c0, u0 = before.get(name, (0, 0))
        if calls > c0:
            rows[name] = {"per_memory": round((calls - c0) / n, 2),
                          "us_per_memory": round((usec - u0) / n, 1)}
    return dict(sorted(rows.items(), key=lambda kv: -kv[1]["us_per_memory"])[:8])


def import_rate(server, ns: str, items: list[dict], per_request: int, posters: int) -> float:
    """``POST /import`` of ``items`` in documents of ``per_request``, ``posters`` documents
    in flight at once (1: one after the other, as ``Deployment.import_rate``); memories per
    second over all of them."""
    if posters == 1:
        return server.import_rate(ns, items, per_request=per_request)
    docs = [items[s:s + per_request] for s in range(0, len(items), per_request)]

    def post(k):
        for doc in docs[k::posters]:
            server.post("/import", {"schema_version": 2, "user_id": ns, "memories": [
                {"user_id": ns, "importance": 0.5, **it} for it in doc]})

    started = time.perf_counter()
    threads = [threading.Thread(target=post, args=(k,)) for k in range(posters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(items) / (time.perf_counter() - started)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--per-request", type=int, default=1000)
    ap.add_argument("--posters", type=int, default=1,
                    help="documents in flight at once (each round into one namespace)")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()

    deploy = recall_http.Deployment("import")
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from accounts.tokens import token_create
    from memories import store

    client = store.get_client()
    log(f"building {args.docs * args.rounds} memories from {args.data_dir}")
    items, _ = recall_corpus.build(args.data_dir, args.docs * args.rounds)
    user = User.objects.create_user("bench-importer")
    user.groups.add(*Group.objects.filter(name="admin"))
    server = recall_http.Server(deploy, token_create(user=user))
    server.start()
    rounds = []
    try:
        server.post("/recall", {"user_id": "import-warm", "query": "warm up", "limit": 1})
        for r in range(args.rounds):
            part = items[r * args.docs:(r + 1) * args.docs]
            cpu0, rcpu0 = server_cpu_seconds(server.proc.pid), redis_cpu_seconds(
                deploy.env["REDIS_URL"])
            stats0 = command_stats(client)
            slow = SlowLog(client, deploy.prefix)
            started = time.perf_counter()
            rate = import_rate(server, f"import-{r}", part, args.per_request, args.posters)
            wall = time.perf_counter() - started
            longest_ms, longest = slow.close()
            cpu1, rcpu1 = server_cpu_seconds(server.proc.pid), redis_cpu_seconds(
                deploy.env["REDIS_URL"])
            row = {"per_s": round(rate), "load1": round(os.getloadavg()[0], 1),
                   "wall_s": round(wall, 2),
                   "gunicorn_cpu_ms_per_memory": round((cpu1 - cpu0) * 1000 / len(part), 3)
                   if cpu0 is not None else None,
                   "redis_cpu_ms_per_memory": round((rcpu1 - rcpu0) * 1000 / len(part), 3)
                   if rcpu0 is not None else None,
                   "max_redis_command_ms": longest_ms, "longest": longest[:1],
                   "commands": stats_delta(stats0, command_stats(client), len(part))}
            rounds.append(row)
            log(f"round {r}: {row}")
    finally:
        server.stop()
    headline = {"docs": args.docs, "per_request": args.per_request, "posters": args.posters,
                "rounds": rounds}
    results_io.write_headline("import_rate", title="POST /import alone", params=vars(args),
                              headline=headline)
    print(json.dumps(headline), flush=True)
    deploy.cleanup()
    os._exit(0)


if __name__ == "__main__":
    main()
