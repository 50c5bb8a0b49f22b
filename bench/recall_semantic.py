"""What semantic rescoring adds to recall latency at one namespace size, in-process and over HTTP.

    BENCH_DB_FILE=... BENCH_KEY_PREFIX=... .venv/bin/python bench/recall_semantic.py \
        [--docs 100000] [--queries 150] [--repeat 2] [--no-http] [--data-dir ../shared/data]

The corpus is bench/recall.py's (LoCoMo turns replicated to ``--docs`` in one namespace, kept
with ``BENCH_DB_FILE`` / ``BENCH_KEY_PREFIX``, or ingested here when the namespace holds fewer),
embedded by the worker's job (``bench.embedding_job``) until nothing is pending (``--no-embed``:
as it is, while another process embeds it; the JSON says how much of each window was). Queries:
``natural`` LoCoMo questions mapped to a replica, a different set for every repetition, so no
query is answered from a process's query-vector cache (agents do repeat questions; that case is
the cache's, not measured here).

Systems, timed interleaved query by query (the order rotates): the default profile (``context``:
``w_semantic`` 0.4 over a window of 100) and the same profile with ``w_semantic`` 0, in-process
(``memory_search``) and through ``POST /api/v1/recall`` on gunicorn as shipped (the w = 0 twin
is a profile row ``bench-context-w0``, created for the run and deleted after). The in-process
query cache is cleared before each rescoring recall. Parts, timed alone on the same queries:
the query encode (``encoder.encode``, batch of 1; wall and this thread's CPU time, the part
the load does not inflate) and the window's read (``embeddings.window_read`` of the w = 0 top
100: the database check and the embeddings, one query). p50 / p90 / p99 in ms, load average before
and after. The LAST line is one JSON object.
"""

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import embedding_job, recall_corpus, recall_http, results_io  # noqa: E402
from bench.recall import NS, interleaved, kept_corpus, log, pct  # noqa: E402

W0 = "bench-context-w0"


def load() -> list[float]:
    return [round(x, 1) for x in os.getloadavg()]


def summary(values: list[float]) -> dict:
    return {"p50": round(pct(values, 50), 2), "p90": round(pct(values, 90), 2),
            "p99": round(pct(values, 99), 2), "n": len(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=150, help="per repetition")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument("--no-embed", action="store_true",
                    help="time the corpus as it is (another process is embedding it)")
    args = ap.parse_args()

    deploy = recall_http.Deployment("recall")
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from accounts.tokens import token_create
    from memories import store
    from search import embeddings
    from search.index import fields
    from search.memory_search import memory_search
    from search.models import RankingProfile
    from search.semantic import encoder
    from search.serving import feed

    items, info = kept_corpus(args.data_dir, args.docs)
    n_emb = 0
    if not args.no_embed:
        log(f"embedding job until nothing is pending (encoder: {encoder.backend()})")
        n_emb, emb_s = embedding_job.run_until_done()
        log(f"  {n_emb} embedded in {emb_s:.0f} s")
    questions = recall_corpus.questions(args.data_dir, info,
                                        n=args.queries * args.repeat + 40, seed=11)
    warm, questions = questions[:40], questions[40:]
    rounds = [[("natural", q) for q in questions[r::args.repeat]] for r in range(args.repeat)]

    default = RankingProfile.objects.get(is_default=True)
    w0 = copy.copy(default)
    w0.w_semantic = 0.0
    field = fields.content_field(stemming=default.stemming, context=default.context)
    memory_search(user_id=NS, query=warm[0], limit=10, profile=default)  # waits for the index
    served = feed._registry.get((store.namespace_base(NS), field))
    while served is not None and served.index is None:  # the first recall waited for it
        time.sleep(0.05)
    for q in warm[:5]:  # the encoder's session, the first queries
        memory_search(user_id=NS, query=q, limit=10, profile=default)

    def inproc_semantic(q):
        embeddings.clear_query_cache()
        return memory_search(user_id=NS, query=q, limit=10, profile=default)

    systems = {"inproc_semantic": inproc_semantic,
               "inproc_w0": lambda q: memory_search(user_id=NS, query=q, limit=10, profile=w0)}
    server, created = None, False
    if not args.no_http:
        fields = {f.name: getattr(default, f.name) for f in RankingProfile._meta.concrete_fields
                  if f.name not in ("id", "name", "is_default", "builtin", "updated_at")}
        _, created = RankingProfile.objects.get_or_create(
            name=W0, defaults={**fields, "w_semantic": 0.0, "is_default": False})
        user, _ = User.objects.get_or_create(username="bench-agent")
        user.groups.add(*Group.objects.filter(name="admin"))
        server = recall_http.Server(deploy, token_create(user=user))
        server.start()
        for _ in range(2):  # each process builds its serving indexes in the background
            for q in warm:
                server.recall(NS, q, None)
                server.recall(NS, q, W0)
            time.sleep(20)
        systems["http_semantic"] = lambda q: server.recall(NS, q, None)
        systems["http_w0"] = lambda q: server.recall(NS, q, W0)

    loads = [load()]
    times = {name: [] for name in systems}
    for n, queries in enumerate(rounds):
        log(f"round {n + 1}/{len(rounds)}: {len(queries)} queries x {len(systems)} systems, "
            f"load {load()}")
        out = interleaved(systems, queries, 1)
        for name in systems:
            times[name] += out[name]["natural"]
        loads.append(load())

    log("parts: query encode, window read")
    enc_ms, enc_cpu, read_ms, held = [], [], [], []
    for q in questions:
        window = [h.memory_id for h in memory_search(user_id=NS, query=q, limit=100,
                                                     profile=w0).results]
        t, c = time.perf_counter(), time.thread_time()
        encoder.encode([q])
        enc_ms.append((time.perf_counter() - t) * 1000)
        enc_cpu.append((time.thread_time() - c) * 1000)
        t = time.perf_counter()
        _, vectors = embeddings.window_read(window)
        read_ms.append((time.perf_counter() - t) * 1000)
        held.append(len(vectors))
    loads.append(load())
    if server is not None:
        server.stop()
    if created:
        RankingProfile.objects.filter(name=W0).delete()

    result = {"n_docs": args.docs, "queries": len(questions), "encoder": encoder.backend(),
              "load_average": loads, "embedded_by_job": n_emb,
              "window_embedded_p50": pct(held, 50)}
    for name, values in times.items():
        result[name] = summary(values)
    result["query_encode"] = summary(enc_ms)
    result["query_encode_cpu"] = summary(enc_cpu)
    result["window_read"] = summary(read_ms)
    for where in ("inproc", "http"):
        if f"{where}_w0" in times:
            added = [a - b for a, b in zip(times[f"{where}_semantic"], times[f"{where}_w0"],
                                           strict=True)]
            result[f"{where}_added"] = summary(added)
            result[f"{where}_added_p50_of_p50s"] = round(
                pct(times[f"{where}_semantic"], 50) - pct(times[f"{where}_w0"], 50), 2)
    print(f"\n{args.docs:,} memories, {len(questions)} natural questions, encoder "
          f"{encoder.backend()}, load average {loads}")
    print(f"{'':<18}{'p50':>9}{'p90':>9}{'p99':>9}")
    for name in [*times, "query_encode", "query_encode_cpu", "window_read", "inproc_added",
                 "http_added"]:
        if name in result:
            s = result[name]
            print(f"{name:<18}{s['p50']:>9.2f}{s['p90']:>9.2f}{s['p99']:>9.2f}")
    results_io.write_headline("recall_semantic", title=f"What rescoring adds to recall at "
                              f"{args.docs:,} memories", params=vars(args), headline=result)
    print(json.dumps(result), flush=True)
    deploy.cleanup()
    os._exit(0)


if __name__ == "__main__":
    main()
