"""A fresh process's first recall of a large namespace, its serving index loaded from the
snapshot kept in Redis (``search/serving/snapshot.py``), and what that snapshot weighs.

    BENCH_REDIS_URL=redis://127.0.0.1:6379/11 .venv/bin/python bench/first_recall.py \\
        [--docs 100000] [--runs 5] [--data-dir ../shared/data]

The realistic corpus of ``bench/recall.py`` (``bench/recall_corpus.py``: LoCoMo turns with
their context, replicated and perturbed, ~5 % Chinese) loaded through
``memory_create_many`` into one namespace (production settings, a throw-away SQLite file, a
Redis key prefix of the run's own; ``BENCH_DB_FILE`` / ``BENCH_KEY_PREFIX`` reuse a kept
corpus). The namespace's first recall settles it; then the worker's refresh
(``search.serving.snapshot_refresh``) saves the three fields' snapshots (a build and a save
each), timed, with the longest Redis command meanwhile (SLOWLOG over 0.5 ms: the build's
reads of the records included); after one write, each field's snapshot is saved again from
the caught-up index, every Redis command of that save logged (its chunks, the switch that
deletes the old chunks).

Figures:

- per field (``c``, ``s``, ``xs``): documents, postings, the snapshot's bytes (the encoded
  blob; and ``MEMORY USAGE`` of its meta and chunk keys, what Redis holds) per memory, its
  chunks and the largest, the section sizes, the seconds to save it and to load it alone;
- the first recall of a fresh process (``feed.clear()``: no index held), per profile
  (``bm25``: field ``c``; the default profile without its semantic rescoring, whose encoder
  load is not the index's: field ``xs``): wall ms of each of ``--runs`` runs and their
  median, whether the index was loaded (never built), and the longest Redis command during
  it (SLOWLOG with every command logged: ``slowlog-log-slower-than 0`` on the server, both
  settings restored after each run; only commands naming this run's keys count).

The LAST line is one JSON object with the headline figures.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall_http, results_io  # noqa: E402
from bench.recall import NS, kept_corpus  # noqa: E402
from bench.slowlog import SlowLog, every_command  # noqa: E402

FIELDS = ("c", "s", "xs")


def log(msg: str) -> None:
    print(f"==> {msg}", file=sys.stderr, flush=True)


def snapshot_keys(client, meta: dict, field: str) -> list[str]:
    from search.serving import snapshot

    return [snapshot._meta_key(NS, field),
            *snapshot._chunk_keys(NS, field, meta["token"], meta["chunks"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    deploy = recall_http.Deployment("first-recall")
    deploy.setup_django()
    from django.contrib.auth.models import Group, User

    from memories import services, store
    from memories.errors import IndexRebuilding
    from memories.models import Memory
    from search.memory_search import memory_search
    from search.models import RankingProfile
    from search.profile_services import profile_create, profile_settings
    from search.serving import feed, snapshot, snapshot_refresh

    client = store.get_client()
    kept_corpus(args.data_dir, args.docs)
    n_docs = Memory.objects.filter(user_id=NS, deleted_at__isnull=True).count()

    user, _ = User.objects.get_or_create(username="bench-agent")
    user.groups.add(*Group.objects.filter(name="admin"))
    default = RankingProfile.objects.get(is_default=True)
    lexical_name = f"{default.name}-lexical"
    settings = {k: v for k, v in profile_settings(default).items() if k != "name"}
    lexical = RankingProfile.objects.filter(name=lexical_name).first() or profile_create(
        actor=user, name=lexical_name, reason="bench", **{**settings, "w_semantic": 0.0})
    profiles = {"bm25": RankingProfile.objects.get(name="bm25"), lexical_name: lexical}

    # The first recall settles a namespace a write started (search.index_lost), and builds
    # (its background build saves a snapshot; asked again while it runs past the wait).
    # Then the worker's refresh saves every field.
    for prof in profiles.values():
        while True:
            try:
                memory_search(user_id=NS, query="hello", profile=prof)
                break
            except IndexRebuilding:
                pass
    for field in FIELDS:
        thread = feed.entry(NS, field).thread
        if thread is not None:
            thread.join()
    feed.clear()
    snapshot.discard(NS)
    # Its commands are too many for a log of every one: those over 0.5 ms are kept.
    slow = SlowLog(client, deploy.prefix)
    started = time.perf_counter()
    refreshed = snapshot_refresh.refresh_all([NS])
    refresh_s = time.perf_counter() - started
    refresh_longest, refresh_top = slow.close()
    log(f"refresh: {refreshed} in {refresh_s:.1f} s; longest Redis command "
        f"{refresh_longest:.2f} ms {refresh_top}")
    prefix = store.namespace_base(NS)
    # One write after them, then each field's snapshot saved again from the index caught up
    # (what the refresh does to a stale one: its old chunks deleted by the switch), with
    # every Redis command of the save logged.
    services.memory_create(user_id=NS, content="a write after the snapshots were saved")
    save_longest = {}
    for field in FIELDS:
        purge_count = snapshot.purges(client, NS)
        served, index = feed.serving_index(client, NS, field)
        saved = {}

        def save(field=field, served=served, index=index, purge_count=purge_count,
                 saved=saved):
            saved["ok"] = snapshot.save(client, NS, field, index, gen=served.gen,
                                        format=served.format, last_id=served.last_id,
                                        added=served.added, purge_count=purge_count)

        try:
            commands = every_command(client, save)
        finally:
            served.lock.release()
        assert saved["ok"]
        save_longest[field] = max((ms for ms, c in commands if prefix in c), default=0.0)
    log(f"saved again: longest Redis command per field (ms) {save_longest}")

    rows, total_blob, total_redis, sections = [], 0, 0, {}
    for field in FIELDS:
        meta = snapshot.describe(client, NS, field)
        keys = snapshot_keys(client, meta, field)
        in_redis = sum(int(client.memory_usage(k, samples=0) or 0) for k in keys)
        largest = max(int(client.strlen(k)) for k in keys[1:])
        head = feed.feed_reply(client, NS, field, "0-0", 0)
        load_s = []
        for _ in range(3):
            started = time.perf_counter()
            assert snapshot.load(client, NS, field, head) is not None
            load_s.append(time.perf_counter() - started)
        # The encoding alone (what a save costs beyond writing its chunks).
        served, index = feed.serving_index(client, NS, field)
        try:
            started = time.perf_counter()
            snapshot.encode(index)
            encode_s = time.perf_counter() - started
        finally:
            served.lock.release()
        total_blob += meta["bytes"]
        total_redis += in_redis
        for name, _dtype, _count, length in meta["sections"]:
            sections[f"{field} {name}"] = round(length / n_docs, 2)
        rows.append([field, meta["docs"], meta["postings"], meta["terms"],
                     round(meta["bytes"] / n_docs, 1), round(in_redis / n_docs, 1),
                     meta["chunks"], largest, round(encode_s, 2),
                     round(statistics.median(load_s), 3)])
        log(f"{field}: {rows[-1]}")

    first, slowest, loaded = {}, {}, {}
    for name, prof in profiles.items():
        first[name], slowest[name], loaded[name] = [], 0.0, True
        for _ in range(args.runs):
            feed.clear()  # a fresh process: no index held
            loads, builds = feed.counters.loads, feed.counters.builds
            took = {}

            def run(prof=prof, took=took):
                started = time.perf_counter()
                memory_search(user_id=NS, query="what did Caroline paint last summer",
                              profile=prof)
                took["ms"] = (time.perf_counter() - started) * 1000

            commands = every_command(client, run)
            first[name].append(round(took["ms"], 1))
            ours = [(ms, c) for ms, c in commands if prefix in c]
            slowest[name] = max(slowest[name], max((ms for ms, _ in ours), default=0.0))
            loaded[name] &= feed.counters.loads > loads and feed.counters.builds == builds
        log(f"{name}: first recall ms {first[name]} (median "
            f"{statistics.median(first[name]):.0f}); longest command {slowest[name]:.2f} ms; "
            f"loaded, not built: {loaded[name]}")

    headline = {
        "docs": n_docs,
        "snapshot_bytes_per_memory": round(total_blob / n_docs, 1),
        "snapshot_redis_bytes_per_memory": round(total_redis / n_docs, 1),
        **{f"first_recall_ms_median_{name}": statistics.median(first[name]) for name in first},
        **{f"longest_command_ms_{name}": round(slowest[name], 3) for name in slowest},
        "loaded_not_built": all(loaded.values()),
        "refresh_s": round(refresh_s, 1),
        "refresh_longest_command_ms": round(refresh_longest, 3),
        "save_longest_command_ms": round(max(save_longest.values()), 3),
    }
    results_io.write_run(
        "first_recall", params=vars(args),
        title=f"A fresh process's first recall at {n_docs:,} memories, loaded from Redis",
        figures=[
            results_io.table("Snapshots per field",
                             ["field", "docs", "postings", "terms", "blob B/memory",
                              "Redis B/memory", "chunks", "largest chunk B", "encode s",
                              "load s"], rows),
            results_io.table("First recall of a fresh process (ms per run)",
                             ["profile", "runs ms", "median ms", "longest command ms",
                              "loaded, not built"],
                             [[name, first[name], statistics.median(first[name]),
                               round(slowest[name], 3), loaded[name]] for name in first]),
            results_io.table_from_mapping("Snapshot sections, bytes per memory", sections),
            results_io.table_from_mapping("Headline figures", headline),
        ])
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
