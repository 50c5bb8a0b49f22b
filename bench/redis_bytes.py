"""Where Redis memory per memory goes: a ``POST /import`` of realistic memories, then every
key of the run weighed.

    .venv/bin/python bench/redis_bytes.py [--docs 20000] [--per-request 1000]
                                          [--hash-sample 5000] [--data-dir ../shared/data]

Memories are LoCoMo turns with their context, replicated and perturbed, ~5 % Chinese
(``bench/recall_corpus.py``), imported through ``POST /import`` (merge, documents of
``--per-request``) into one namespace of gunicorn as shipped (``bench/recall_http.py``):
production settings, a throw-away SQLite file, Redis ``BENCH_REDIS_URL`` under a key prefix
of the run's own, the job queues under that prefix too. The import mirrors inline (the hot
store, every index record, the write stream); the bench then waits until the run's queues
are empty (no worker runs: a job left queued would be counted as queue bytes) and does what
the worker does next (``drain_snapshots``: a first recall settles the new namespace, the
periodic refresh saves its serving index snapshots in Redis), so the figure is the
namespace's steady state: everything.

Figures, all per imported memory:

- the growth of Redis ``used_memory`` over the import (server-wide: another client's keys
  move it, so the run also gives the sum of its own keys, which nothing else moves);
- ``MEMORY USAGE <key> SAMPLES 0`` of every key of the run (a SCAN of its prefix and of its
  queues' keys) by family: the hot-store hashes ``m:<id>``; the index records ``v:d:<id>``
  (a generation ``v@N`` as its own family); per index field (``c``, ``s``, ``xs``) the
  statistics ``<f>:stats``; the version hash ``ver``, the id set ``ids``, the write stream,
  the namespace's small keys (``gen``, ``format``, ``fields``), the serving-index snapshots
  kept in Redis, the namespace registry, the queues, anything else; each as bytes per
  memory and share of the growth (an index of format 6, with postings ``<f>:t:<term>``,
  document vectors ``<f>:d:<id>`` and registries, is still told apart);
- for a format-6 index, postings per memory per field (``ZCARD``), and how many postings
  keys Redis holds in its compact encoding (listpack) against a skiplist;
- the hot-store hash fields whose value is the empty string: how many per memory, which, and
  their bytes (each sampled hash copied without them under a key name of the same length,
  the two ``MEMORY USAGE`` subtracted).

The LAST line is one JSON object with the headline figures (``redis_bytes_per_memory``).
"""

import argparse
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_corpus, recall_http, results_io  # noqa: E402

NS = "redis-bytes"
BATCH = 1000
# Small per-namespace keys (one each), summed as one family.
SMALL = {"gen": "namespace keys (gen, format, fields)",
         "format": "namespace keys (gen, format, fields)",
         "fields": "namespace keys (gen, format, fields)",
         "building": "namespace keys (gen, format, fields)"}
NOTES = ("Shares are of the growth of `used_memory` over the import. \"Not in any key\" is "
         "that growth less the keys' own `MEMORY USAGE`: the keyspace's tables, scripts, "
         "client buffers, and whatever another client of the same server changed meanwhile. "
         "A family with no key (the queues: the import queued no job) shows 0.")
FIELD_PARTS = {"t": "postings", "d": "document vectors", "stats": "statistics",
               "terms": "term registry", "docs": "document registry", "exp": "expiry set"}


def log(msg: str) -> None:
    print(f"==> {msg}", file=sys.stderr, flush=True)


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


def family(key: str, base: str, prefix: str) -> tuple[str, str | None, str | None]:
    """``(family, field, part)`` of a key name: ``("c postings", "c", "postings")``,
    ``("hot-store hashes", None, None)``..."""
    if key.startswith("rq:"):
        return "queues", None, None
    if not key.startswith(base):
        return ("namespace registry" if key == f"{prefix}:namespaces"
                else "other keys of the prefix"), None, None
    head, _, rest = key[len(base):].partition(":")
    if head == "m":
        return "hot-store hashes", None, None
    if head == "ver":
        return "version hash (ver)", None, None
    if head == "ids":
        return "id set (ids)", None, None
    if head == "stream":
        return "write stream", None, None
    if head in SMALL:
        return SMALL[head], None, None
    if head in ("snap", "snaps"):
        return "serving index snapshots (snap)", None, None
    part = FIELD_PARTS.get(rest.split(":", 1)[0]) if rest else None
    if part and head.partition("@")[0] == "v":
        return f"{head} index records", None, None
    if part:
        return f"{head} {part}", head, part
    return "other keys of the namespace", None, None


def run_keys(client, prefix: str, queue_prefix: str) -> list[str]:
    """Every key of the run: its prefix, its queues' keys and the jobs they name."""
    keys = [text(k) for k in client.scan_iter(match=f"{prefix}:*", count=5000)]
    rq = [text(k) for k in client.scan_iter(match=f"rq:*{queue_prefix}*", count=5000)]
    jobs = []
    for key in rq:
        if client.type(key) in (b"list", "list"):
            jobs += [f"rq:job:{text(j)}" for j in client.lrange(key, 0, -1)]
    return keys + rq + [j for j in jobs if client.exists(j)]


def weigh(client, keys: list[str]) -> tuple[list[int], list[str]]:
    """``MEMORY USAGE … SAMPLES 0`` (exact) and ``OBJECT ENCODING`` of each key, pipelined."""
    sizes, encodings = [], []
    for s in range(0, len(keys), BATCH):
        pipe = client.pipeline(transaction=False)
        for key in keys[s:s + BATCH]:
            pipe.memory_usage(key, samples=0)
            pipe.object("encoding", key)
        out = pipe.execute()
        sizes += [int(v or 0) for v in out[0::2]]
        encodings += [text(v) if v else "" for v in out[1::2]]
    return sizes, encodings


def postings_counts(client, keys: list[str]) -> list[int]:
    counts = []
    for s in range(0, len(keys), BATCH):
        pipe = client.pipeline(transaction=False)
        for key in keys[s:s + BATCH]:
            pipe.zcard(key)
        counts += [int(v) for v in pipe.execute()]
    return counts


def empty_fields(client, hash_keys: list[str], base: str, sample: int) -> dict:
    """Empty-string fields of up to ``sample`` hot-store hashes: ``{"per_memory", "bytes",
    "by_field": {name: share of hashes}, "sampled"}``; bytes measured by a copy without them
    under a key name of the same length (``M:`` for ``m:``), deleted at once."""
    chosen = random.Random(11).sample(hash_keys, min(sample, len(hash_keys)))
    empties, saved, by_field = 0, 0, Counter()
    for s in range(0, len(chosen), BATCH):
        part = chosen[s:s + BATCH]
        pipe = client.pipeline(transaction=False)
        for key in part:
            pipe.hgetall(key)
        hashes = pipe.execute()
        pipe = client.pipeline(transaction=False)
        copies = []
        for key, raw in zip(part, hashes, strict=True):
            kept = {k: v for k, v in raw.items() if text(v) != ""}
            gone = [text(k) for k, v in raw.items() if text(v) == ""]
            empties += len(gone)
            by_field.update(gone)
            copy = base + "M:" + key[len(base) + 2:]
            copies.append(copy)
            pipe.memory_usage(key, samples=0)
            if kept:
                pipe.hset(copy, mapping=kept)
            pipe.memory_usage(copy, samples=0)
            pipe.delete(copy)
        out = iter(pipe.execute())
        for raw in hashes:
            whole = int(next(out) or 0)
            if any(text(v) != "" for v in raw.values()):
                next(out)
            lean = int(next(out) or 0)
            next(out)
            saved += whole - lean
    n = max(1, len(chosen))
    return {"per_memory": round(empties / n, 2), "bytes": round(saved / n, 1),
            "by_field": {k: round(v / n, 3) for k, v in by_field.most_common()},
            "sampled": len(chosen)}


def drain_snapshots(ns: str) -> dict:
    """What the worker does next: a first recall settles the new namespace (its ``new:``
    stamp, search.index_lost), then the periodic refresh saves each field's serving index
    snapshot in Redis (search.serving.snapshot_refresh). Returns the refresh's counts."""
    from memories.errors import IndexRebuilding
    from search.memory_search import memory_search
    from search.serving import snapshot_refresh

    while True:
        try:
            memory_search(user_id=ns, query="hello", profile="bm25")
            break
        except IndexRebuilding:  # its index still building on this process's thread
            time.sleep(1)
    return snapshot_refresh.refresh_all([ns])


def queues_empty(client, queue_prefix: str) -> bool:
    return all(client.llen(f"rq:queue:{queue_prefix}{name}") == 0
               for name in ("default", "index"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--per-request", type=int, default=1000)
    ap.add_argument("--hash-sample", type=int, default=5000,
                    help="hot-store hashes read for their empty fields")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()

    deploy = recall_http.Deployment("redis_bytes")
    queue_prefix = deploy.prefix + ":"
    deploy.env["MEMORY_QUEUE_PREFIX"] = queue_prefix
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from accounts.tokens import token_create
    from memories import store

    client = store.get_client()
    log(f"building {args.docs} memories from {args.data_dir}")
    items, _ = recall_corpus.build(args.data_dir, args.docs)
    content_bytes = sum(len(it["content"].encode()) for it in items) / len(items)
    user = User.objects.create_user("bench-bytes")
    user.groups.add(*Group.objects.filter(name="admin"))
    server = recall_http.Server(deploy, token_create(user=user))
    server.start()
    try:
        before = int(client.info("memory")["used_memory"])
        rate = server.import_rate(NS, items, per_request=args.per_request)
        waited = time.monotonic()
        while not queues_empty(client, queue_prefix) and time.monotonic() - waited < 600:
            time.sleep(1)
        snapshots = drain_snapshots(NS)
        after = int(client.info("memory")["used_memory"])
    finally:
        server.stop()
    log(f"POST /import {rate:,.0f}/s; snapshots refreshed {snapshots}; used_memory grew "
        f"{(after - before) / args.docs:,.0f} B per memory")

    n = args.docs
    base = store.namespace_base(NS)
    keys = run_keys(client, deploy.prefix, queue_prefix)
    sizes, encodings = weigh(client, keys)
    fam_bytes, fam_keys = Counter(), Counter()
    fam_enc: dict[str, Counter] = defaultdict(Counter)
    field_keys: dict[str, list[str]] = defaultdict(list)
    field_weights: dict[str, list[tuple[int, str]]] = defaultdict(list)
    hash_keys = []
    for key, size, enc in zip(keys, sizes, encodings, strict=True):
        fam, field, part = family(key, base, deploy.prefix)
        fam_bytes[fam] += size
        fam_keys[fam] += 1
        fam_enc[fam][enc] += 1
        if part == "postings":
            field_keys[field].append(key)
            field_weights[field].append((size, enc))
        elif fam == "hot-store hashes":
            hash_keys.append(key)
        elif fam.startswith("other"):
            log(f"{fam}: {key} {size} B")
    growth = after - before
    keys_total = sum(fam_bytes.values())
    fam_bytes["not in any key (used_memory growth - keys)"] = growth - keys_total
    fam_bytes["queues"] += 0  # listed when empty too: the import mirrors inline
    share = (lambda b: round(100 * b / growth, 1)) if growth > 0 else (lambda b: None)
    rows = [[fam, fam_keys.get(fam, 0), round(b / n, 1), share(b),
             ", ".join(f"{e} {c}" for e, c in fam_enc[fam].most_common())]
            for fam, b in sorted(fam_bytes.items(), key=lambda kv: -kv[1])]

    post_rows, postings_per_memory = [], {}
    for field in sorted(field_keys):
        counts = postings_counts(client, field_keys[field])
        total = sum(counts)
        postings_per_memory[field] = round(total / n, 2)
        by_enc: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # keys, postings, bytes
        for count, (size, enc) in zip(counts, field_weights[field], strict=True):
            row = by_enc["skiplist" if enc == "skiplist" else "listpack"]
            row[0], row[1], row[2] = row[0] + 1, row[1] + count, row[2] + size
        lp, sk = by_enc["listpack"], by_enc["skiplist"]
        post_rows.append([
            field, len(counts), round(total / n, 2),
            round((lp[2] + sk[2]) / total, 1) if total else None,
            lp[0], round(lp[2] / lp[1], 1) if lp[1] else None,
            sk[0], round(100 * sk[1] / total, 1) if total else None,
            round(sk[2] / sk[1], 1) if sk[1] else None])
    empty = empty_fields(client, hash_keys, base, args.hash_sample)
    log(f"{len(keys)} keys weighed; empty hash fields {empty['per_memory']} per memory, "
        f"{empty['bytes']} B")

    headline = {
        "n_docs": n, "import_per_s": round(rate),
        "redis_bytes_per_memory": round(growth / n),
        "keys_bytes_per_memory": round(keys_total / n),
        "content_bytes_per_memory": round(content_bytes, 1),
        "keys": len(keys),
        "postings_per_memory": postings_per_memory,
        "postings_per_memory_all_fields": round(sum(postings_per_memory.values()), 2),
        "empty_hash_fields_per_memory": empty["per_memory"],
        "empty_hash_field_bytes_per_memory": empty["bytes"],
        "load1": round(os.getloadavg()[0], 1),
    }
    figures = [
        results_io.table_from_mapping("Headline figures (per imported memory)", headline),
        results_io.table(
            "By key family: MEMORY USAGE SAMPLES 0 of every key; share of used_memory growth",
            ["family", "keys", "bytes per memory", "share %", "encodings (keys)"], rows),
        results_io.table("Postings per field, by the encoding Redis keeps each term's sorted "
                         "set in",
                         ["field", "terms (keys)", "postings per memory", "bytes per posting",
                          "listpack keys", "listpack: bytes per posting", "skiplist keys",
                          "skiplist: share of postings %", "skiplist: bytes per posting"],
                         post_rows),
        results_io.table(
            f"Hot-store hash fields holding the empty string (of {empty['sampled']} hashes)",
            ["field", "empty in share of hashes"],
            [[k, v] for k, v in empty["by_field"].items()]),
    ]
    results_io.write_run("redis_bytes", title="Redis bytes per memory after POST /import, by key "
                         "family", params=vars(args), figures=figures, notes=NOTES)
    for row in rows:
        log(f"{row[0]:<48} {row[1]:>8} keys {row[2]:>9} B/memory {row[3]} %")
    for key in client.scan_iter(match=f"rq:*{queue_prefix}*", count=5000):
        client.delete(key)
    print(json.dumps(headline), flush=True)
    deploy.cleanup()
    os._exit(0)


if __name__ == "__main__":
    main()
