"""The first default-profile recall of each gunicorn worker after a start, and the processes'
memory, with the encoder preloaded in the master (``WEB_PRELOAD_ENCODER=1``, as shipped) and
without it (0: each worker loads it on its first rescoring recall); with ``--compare warm``,
the encoder preloaded in both, with the workers' warm-up (as shipped: ``post_worker_init``
loads the URLconf before the worker serves) and without it (``bench/gunicorn_cold_conf.py``).

    .venv/bin/python bench/encoder_preload.py [--docs 2000] [--rounds 2] [--compare preload|warm]
                                              [--data-dir ../shared/data]

A LoCoMo corpus (bench/recall.py's, ``--docs`` memories in one namespace) is ingested and
embedded by the worker's job, then for each round gunicorn is started as shipped
(3 processes x 3 threads on 2 cores), once per setting, the settings alternating. After
``/healthz`` answers and the workers have booted (their CPU time stops rising: that CPU time
is reported too, it holds what a warm-up moved out of the first request), recalls with
the default profile (``context``, rescoring) are sent one at a time, each on a new connection
with a question not asked before (no query-vector cache), until every worker has answered
one: the worker whose CPU time rose most answered it. Figures: the start (``Popen`` to
``/healthz``), each worker's first recall (ms, and the CPU it took), RSS and Pss
(``/proc/<pid>/smaps_rollup``: shared pages divided among their sharers, the honest
per-process figure) of the master and the workers before the first recall and after every
worker answered one, and the load average. The LAST line is one JSON object.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import urllib3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import embedding_job, recall_corpus, recall_http, results_io  # noqa: E402
from bench.load_server import CLK_TCK  # noqa: E402
from bench.recall import NS, kept_corpus, log  # noqa: E402


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def workers_of(master: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    out.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return sorted(out)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_mb(pid: int) -> dict:
    """``{"rss", "pss"}`` of a process in MB (smaps_rollup)."""
    rows = dict(line.split(":", 1) for line in
                Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
    return {k.lower(): round(int(rows[k].split()[0]) / 1024, 1) for k in ("Rss", "Pss")}


def memory(master: int, workers: list[int]) -> dict:
    per = {"master": memory_mb(master), "workers": [memory_mb(p) for p in workers]}
    per["pss_total"] = round(per["master"]["pss"] + sum(w["pss"] for w in per["workers"]), 1)
    return per


def settle(pids: list[int], quiet_s: float = 3.0, most_s: float = 90.0) -> None:
    """Wait until none of ``pids`` used CPU for ``quiet_s`` (the workers have booted)."""
    deadline, last, since = time.monotonic() + most_s, None, time.monotonic()
    while time.monotonic() < deadline:
        now = [cpu_s(p) for p in pids]
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
        time.sleep(0.5)


def recall_on_new_connection(server, query: str) -> dict:
    """A default-profile recall on a connection of its own: any worker may accept it."""
    pool = urllib3.HTTPConnectionPool("127.0.0.1", server.port, maxsize=1, retries=False,
                                      timeout=urllib3.Timeout(total=120))
    try:
        r = pool.request("POST", "/api/v1/recall", headers=server.headers,
                         body=json.dumps({"user_id": NS, "query": query, "limit": 10}).encode())
    finally:
        pool.close()
    if r.status != 200:
        raise RuntimeError(f"recall: {r.status} {r.data[:300]!r}")
    return json.loads(r.data)


SHIPPED, COLD = "python:memory_console.gunicorn_conf", "python:bench.gunicorn_cold_conf"
# --compare: for the setting off / on, (WEB_PRELOAD_ENCODER, gunicorn config).
COMPARE = {"preload": {False: ("0", SHIPPED), True: ("1", SHIPPED)},
           "warm": {False: ("1", COLD), True: ("1", SHIPPED)}}


def one_start(deploy, token: str, compare: str, on: bool, questions: list[str]) -> dict:
    preload, config = COMPARE[compare][on]
    deploy.env["WEB_PRELOAD_ENCODER"] = preload
    server = recall_http.Server(deploy, token, config=config)
    started = time.perf_counter()
    server.start()
    up_s = time.perf_counter() - started
    try:
        master = server.proc.pid
        workers = workers_of(master)
        while len(workers) < 3:
            time.sleep(0.2)
            workers = workers_of(master)
        settle(workers)
        boot_cpu = [round(cpu_s(p), 2) for p in workers]
        before = memory(master, workers)
        load_at_first = load()
        first, sent = {}, 0
        while len(first) < len(workers) and sent < len(questions):
            cpu = {p: cpu_s(p) for p in workers}
            t = time.perf_counter()
            answer = recall_on_new_connection(server, questions[sent])
            ms = (time.perf_counter() - t) * 1000
            sent += 1
            used = {p: cpu_s(p) - cpu[p] for p in workers}
            pid = max(used, key=used.get)
            assert answer["profile"] == "context"
            if used[pid] > 0 and pid not in first:
                first[pid] = {"ms": round(ms, 1), "cpu_ms": round(used[pid] * 1000),
                              "nth_recall": sent}
        after = memory(master, workers)
    finally:
        server.stop()
    return {"compare": compare, "on": on, "preload": preload == "1", "config": config,
            "start_s": round(up_s, 2), "boot_cpu_s": boot_cpu, "load_before": load_at_first,
            "load_after": load(), "first_recall": list(first.values()), "recalls_sent": sent,
            "memory_before": before, "memory_after": after}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--compare", choices=sorted(COMPARE), default="preload")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()

    deploy = recall_http.Deployment("preload")
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from accounts.tokens import token_create

    items, info = kept_corpus(args.data_dir, args.docs)
    log("embedding job until nothing is pending")
    n_emb, _ = embedding_job.run_until_done()
    user, _ = User.objects.get_or_create(username="bench-agent")
    user.groups.add(*Group.objects.filter(name="viewer"))
    token = token_create(user=user)
    questions = recall_corpus.questions(args.data_dir, info, n=60 * 2 * args.rounds, seed=13)

    runs = []
    for r in range(args.rounds):
        for on in ((False, True) if r % 2 == 0 else (True, False)):
            qs, questions = questions[:60], questions[60:]
            log(f"round {r + 1}: {args.compare} {on}, load {load()}")
            runs.append(one_start(deploy, token, args.compare, on, qs))
            log(f"  {runs[-1]['first_recall']} start {runs[-1]['start_s']} s, "
                f"boot CPU {runs[-1]['boot_cpu_s']} s")

    print(f"\n{args.docs:,} memories ({n_emb} embedded here), gunicorn as shipped, "
          f"first default-profile recall of each worker")
    print(f"{args.compare:<8}{'start s':>8}{'first recalls ms (CPU ms)':>40}{'boot CPU s':>16}"
          f"{'worker RSS MB':>16}{'worker Pss MB':>16}{'Pss total':>10}  load")
    for run in runs:
        firsts = " ".join(f"{f['ms']:.0f} ({f['cpu_ms']})" for f in run["first_recall"])
        boot = " ".join(f"{c:.2f}" for c in run["boot_cpu_s"])
        rss = " ".join(f"{w['rss']:.0f}" for w in run["memory_after"]["workers"])
        pss = " ".join(f"{w['pss']:.0f}" for w in run["memory_after"]["workers"])
        print(f"{'on' if run['on'] else 'off':<8}{run['start_s']:>8.1f}{firsts:>40}{boot:>16}"
              f"{rss:>16}{pss:>16}{run['memory_after']['pss_total']:>10.0f}  "
              f"{run['load_before']}")
    headline = {"n_docs": args.docs, "embedded_here": n_emb, "runs": runs}
    results_io.write_headline("encoder_preload", title=f"gunicorn started with and without "
                              f"({args.compare})", params=vars(args), headline=headline)
    print(json.dumps(headline), flush=True)
    deploy.cleanup()
    os._exit(0)


if __name__ == "__main__":
    main()
