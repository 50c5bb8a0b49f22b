"""What the recall log costs a recall over HTTP, and what it costs the database.

    .venv/bin/python bench/recall_log.py [--docs 100000] [--queries 150] [--runs 5]
                                         [--traces 20000] [--data-dir ../shared/data]

The deployment of ``bench/recall.py``'s HTTP run (``bench/recall_http.py``: production
settings, gunicorn as shipped, one namespace of ``--docs`` LoCoMo-like turns) served by two
gunicorns on the same database and Redis: one tracing every recall
(``MEMORY_RECALL_LOG_SAMPLE=1``, the default), one tracing none (``0``). LoCoMo questions
and Chinese questions (``recall_corpus``), top 10 with the default profile, interleaved
query by query between the two, the order alternating; ``--runs`` runs, the median of each
run's p50 and p99. A thread of this process writes the buffered traces to the database every
``MEMORY_RECALL_LOG_FLUSH_SECONDS`` meanwhile, as the worker does.

Then the database's growth: ``--traces`` recalls traced in this process (``recall_traced``,
the natural questions in turn), written, and the recall tables' size before and after
(SQLite's ``dbstat``), per trace and per million; and the Redis bytes a buffered trace
takes while it waits. The LAST line is JSON; a run file goes to ``bench/results/``.
"""

import argparse
import copy
import json
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402
from bench.recall import NS, interleaved, kept_corpus, log, pct  # noqa: E402

TABLES = ("recalls_recall", "recalls_recallresult")


def table_bytes(connection) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN "
                       "(SELECT name FROM sqlite_master WHERE tbl_name IN (%s, %s))", TABLES)
        return int(cursor.fetchone()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=150, help="per class")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--traces", type=int, default=20_000)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()

    deploy = recall_http.Deployment("recall-log")
    deploy.setup_django()
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.db import connection

    from accounts.tokens import token_create
    from memories import store
    from recalls import log as recall_log
    from recalls.act import recall_traced
    from recalls.models import Recall, RecallResult

    _items, info = kept_corpus(args.data_dir, args.docs)
    questions = ([("natural", q) for q in recall_corpus.questions(args.data_dir, info,
                                                                   n=args.queries)]
                 + [("chinese", q) for q in recall_corpus.chinese_questions(args.data_dir,
                                                                            n=args.queries)])
    user, _ = User.objects.get_or_create(username="bench-agent")
    user.groups.add(*Group.objects.filter(name="admin"))
    token = token_create(user=user)
    off_deploy = copy.copy(deploy)
    off_deploy.env = {**deploy.env, "MEMORY_RECALL_LOG_SAMPLE": "0"}
    servers = {"log_on": recall_http.Server(deploy, token),
               "log_off": recall_http.Server(off_deploy, token)}
    stop = threading.Event()

    def flusher():  # the worker's periodic job, in this process
        while not stop.wait(settings.MEMORY_RECALL_LOG_FLUSH_SECONDS):
            recall_log.recall_log_flush()

    thread = threading.Thread(target=flusher, daemon=True)
    runs = []
    try:
        for server in servers.values():
            server.start()
            server.warm(NS, [q for _, q in questions[:60]])
        for server in servers.values():  # each worker holds its index before timing
            server.warm(NS, [q for _, q in questions[:60]])
        thread.start()
        systems = {name: (lambda q, s=server: s.recall(NS, q, None))
                   for name, server in servers.items()}
        interleaved(systems, questions[:40], 1)  # untimed: first uses
        for run in range(args.runs):
            order = dict(reversed(systems.items())) if run % 2 else systems
            times = interleaved(order, questions, 1)
            runs.append({name: {cls: (pct(ms, 50), pct(ms, 99)) for cls, ms in by.items()}
                         for name, by in times.items()})
            log(f"run {run + 1}: " + json.dumps(runs[-1]))
    finally:
        stop.set()
        for server in servers.values():
            server.stop()

    http = {}
    for name in servers:
        for cls in ("natural", "chinese"):
            http[f"{name}_{cls}_p50_ms"] = round(statistics.median(
                r[name][cls][0] for r in runs), 3)
            http[f"{name}_{cls}_p99_ms"] = round(statistics.median(
                r[name][cls][1] for r in runs), 3)
    overhead = {cls: round(http[f"log_on_{cls}_p50_ms"] - http[f"log_off_{cls}_p50_ms"], 3)
                for cls in ("natural", "chinese")}

    # The database's growth per trace, and a buffered trace's Redis bytes.
    recall_log.recall_log_flush()
    natural = [q for cls, q in questions if cls == "natural"]
    client = store.get_client()
    before_bytes, before_n = table_bytes(connection), Recall.objects.count()
    redis_before = int(client.info("memory")["used_memory"])
    buffered = 0
    for i in range(args.traces):
        recall_traced(actor=user.username, interface="rest", token_id=1, user_id=NS,
                      query=natural[i % len(natural)], limit=10)
        if i == 999:
            buffered = (int(client.info("memory")["used_memory"]) - redis_before) / 1000
        if (i + 1) % 5000 == 0:
            recall_log.recall_log_flush()
    recall_log.recall_log_flush()
    written = Recall.objects.count() - before_n
    per_trace = (table_bytes(connection) - before_bytes) / max(written, 1)
    results_per_trace = RecallResult.objects.count() / max(Recall.objects.count(), 1)
    db = {"traces": written, "results_per_trace": round(results_per_trace, 2),
          "bytes_per_trace": round(per_trace), "gb_per_million": round(per_trace * 1e6 / 1e9, 2),
          "redis_bytes_per_buffered_trace": round(buffered)}

    out = {"docs": args.docs, "queries": len(questions), "runs": args.runs, **http,
           "overhead_p50_ms": overhead, **db}
    results_io.write_run(
        "recall_log", title="What the recall log costs", params=vars(args),
        figures=[
            results_io.table("HTTP recall, tracing on and off (median of the runs' p50/p99, ms)",
                             ["questions", "on p50", "off p50", "on − off p50", "on p99",
                              "off p99"],
                             [[cls, http[f"log_on_{cls}_p50_ms"], http[f"log_off_{cls}_p50_ms"],
                               overhead[cls], http[f"log_on_{cls}_p99_ms"],
                               http[f"log_off_{cls}_p99_ms"]] for cls in ("natural", "chinese")]),
            results_io.table_from_mapping("Database and Redis per trace (SQLite)", db),
        ])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
