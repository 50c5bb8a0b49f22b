"""What the Policy page costs at one namespace size: the forgetting-policy plan, the
consolidation dry run, and the page itself (Django's test client, an admin login), with the
dry run computed on the request (no cached plan) and served from the cached plan.

    BENCH_REDIS_URL=redis://127.0.0.1:6379/10 .venv/bin/python bench/policy_page.py [--n 20000]

The memories are ``bench.corpus.memory_texts`` (chat-length, Zipf-like words), long-term, in
one namespace, a few months old (so the forgetting policy has idle ones to offer). Each
figure is the median of ``--repeat`` runs; the last line is a JSON object.
"""

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django, results_io  # noqa: E402


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    _django.setup("policy_page")

    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from bench.corpus import memory_texts
    from memories import services
    from operations import plan_cache, policy

    user_id = "bench-policy"
    now = dt.datetime.now(dt.UTC)
    texts = memory_texts(args.n, seed=7)
    start = time.perf_counter()
    for lo in range(0, len(texts), 2000):
        services.memory_create_many(
            items=[
                {
                    "user_id": user_id,
                    "content": t,
                    "importance": 0.1 + (i % 9) / 10,
                    "created_at": now - dt.timedelta(days=30 + (i % 120)),
                }
                for i, t in enumerate(texts[lo : lo + 2000], start=lo)
            ]
        )
    load_s = time.perf_counter() - start

    settings.ALLOWED_HOSTS = ["testserver"]
    admin = User.objects.create_user("bench-admin", password="pw")
    admin.groups.add(Group.objects.get(name="admin"))
    client = Client()
    client.force_login(admin)
    url = f"/index/policy/?user_id={user_id}"

    cleanup_s = timed(lambda: policy.cleanup_plan(user_id=user_id), args.repeat)
    # The dry run, as the job computes it (and as every visit computed it before the cache).
    entry = plan_cache.plan_compute(user_id=user_id)
    dry_run_s = entry["seconds"]
    cached_page_s = timed(lambda: client.get(url), args.repeat)
    status = client.get(url).status_code
    stale = plan_cache.plan_cached(user_id=user_id)["stale"]
    out = {
        "memories": args.n,
        "load_s": round(load_s, 1),
        "cleanup_plan_s": round(cleanup_s, 3),
        "consolidation_dry_run_s": round(dry_run_s, 2),
        "page_with_cached_plan_s": round(cached_page_s, 3),
        "page_status": status,
        "groups": len(entry["groups"]),
        "plan_stale_after": stale,
    }
    results_io.write_headline("policy_page", title=f"The Policy page at {args.n:,} memories",
                              params=vars(args), headline=out)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
