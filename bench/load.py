"""Load benchmark: a bounded mixed workload against gunicorn on loopback.

    .venv/bin/python bench/load.py [--rate 200] [--duration 30] [--workers N] [--threads N]

The script starts gunicorn itself (``memory_console.wsgi`` with the product's
``memory_console/gunicorn_conf.py``: gthread workers) on a free
loopback port with a throw-away SQLite file under ``var/bench/`` and a Redis key prefix of its
own (``mcbench-load-<pid>``, Redis database 11 unless ``BENCH_REDIS_URL`` says otherwise),
migrates, starts the job worker beside it (its periodic jobs fold recall hits into the
database, here every 10 s), creates an admin API token with ``manage.py create_api_token`` and a
dashboard login,
seeds memories and sessions through the API, then drives an open-loop schedule of requests
(``--rate`` per second for ``--duration`` seconds, sent on time by a thread pool, so a slow
server shows up as latency rather than as a lower request rate):

=============  ====  =========================================================
kind           mix   request
=============  ====  =========================================================
recall         50%   ``POST /api/v1/recall`` (2-3 corpus words, limit 10)
remember       20%   ``POST /api/v1/memories`` (a new synthetic memory)
append         20%   ``POST /api/v1/sessions/<id>/messages``
page           10%   ``GET /``, ``/memories/``, ``/sessions/``, ``/search/?q=`` (logged in)
=============  ====  =========================================================

It prints per kind: count, errors, p50/p90/p99/max latency (ms, from send to full response),
then overall throughput and how late the schedule ran; the last line is one JSON object.
Gunicorn and the worker are stopped and the database, Redis keys and jobs are removed at the
end, also on Ctrl-C. Target (issue 8): 0 errors and recall p99 <= 50 ms at 200 requests/s.
"""

import argparse
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
import urllib3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import results_io  # noqa: E402
from bench.corpus import WORDS, memory_texts  # noqa: E402
from bench.load_report import LoadReport  # noqa: E402
from bench.load_server import (  # noqa: E402
    LoadServer,
    free_port,
    log,
    process_cpu_seconds,
    redis_cpu_seconds,
    server_cpu_seconds,
)

MIX = (("recall", 50), ("remember", 20), ("append", 20), ("page", 10))
NAMESPACES = [f"bench-u{n}" for n in range(10)]
SESSIONS_PER_NAMESPACE = 3
PAGES = ("/", "/memories/", "/sessions/", "/search/?user_id=bench-u0&q=billing")


class Bench(LoadServer, LoadReport):
    """The workload: seed, then drive the schedule (the server and the report are mixins)."""

    def __init__(self, args):
        self.args = args
        pid = os.getpid()
        self.db = ROOT / "var" / "bench" / f"load-{pid}.sqlite3"
        self.pg_database = f"mcbench_load_{pid}"  # used with --postgres only
        self.prefix = f"mcbench-load-{pid}"
        self.redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.password = secrets.token_urlsafe(16)
        self.env = {
            **{
                k: v
                for k, v in os.environ.items()
                if k not in {"DATABASE_URL", "REDIS_URL", "RQ_REDIS_URL"}
            },
            "DJANGO_SETTINGS_MODULE": "memory_console.settings",
            # Production settings, less the https redirect: TLS would end at a proxy in
            # front, and this loopback run has none.
            "DEBUG": "0",
            "SECURE_SSL_REDIRECT": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": self.database_url(),
            "REDIS_URL": self.redis_url,
            "RQ_REDIS_URL": self.redis_url,
            "MEMORY_KEY_PREFIX": self.prefix,
            "LOG_LEVEL": "WARNING",
            # Persistent database connections, as a production deployment would set them:
            # a new SQLite connection per request re-runs the WAL pragmas each time.
            "DB_CONN_MAX_AGE": os.environ.get("DB_CONN_MAX_AGE", "60"),
            # Folds of recall hits more often than the default 30 s: a run pays for several.
            "MEMORY_ACCESS_FOLD_SECONDS": "10",
            "DJANGO_SUPERUSER_PASSWORD": self.password,
            "PYTHONUNBUFFERED": "1",
        }
        self.server: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.worker_log = None
        self.token = ""
        self.cookie_header = ""
        # The measured requests go through one thread-safe keep-alive pool: urllib3 costs
        # the client about half the CPU that requests' sessions do, CPU the server shares.
        self.pool = urllib3.HTTPConnectionPool(
            "127.0.0.1", self.port, maxsize=args.clients, block=True,
            timeout=urllib3.Timeout(total=30), retries=False,
        )
        self.sessions: list[str] = []
        self.texts = iter(memory_texts(args.seed_memories + int(args.rate * args.duration), seed=7))
        self.lock = threading.Lock()
        self.local = threading.local()

    def login(self) -> None:
        web = requests.Session()
        form = web.get(self.base + "/accounts/login/", timeout=10)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        # Cookies are Secure outside DEBUG; a jar keeps those from plain http, so they go
        # along by hand, here and with every page request.
        response = web.post(
            self.base + "/accounts/login/",
            cookies=web.cookies.get_dict(),
            timeout=10,
            allow_redirects=False,
            data={
                "username": "bench-admin",
                "password": self.password,
                "csrfmiddlewaretoken": token.group(1) if token else "",
            },
            headers={"Referer": self.base + "/accounts/login/"},
        )
        if response.status_code != 302:
            raise RuntimeError(f"dashboard login failed: {response.status_code}")
        self.cookie_header = "; ".join(f"{k}={v}" for k, v in web.cookies.get_dict().items())

    def api(self, method: str, path: str, body=None) -> urllib3.BaseHTTPResponse:
        return self.pool.request(
            method,
            "/api/v1" + path,
            body=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )

    def next_text(self) -> str:
        with self.lock:
            return next(self.texts)

    def seed(self) -> None:
        started = time.monotonic()
        items = [
            (NAMESPACES[n % len(NAMESPACES)], self.next_text())
            for n in range(self.args.seed_memories)
        ]
        with ThreadPoolExecutor(8) as pool:
            statuses = list(
                pool.map(
                    lambda item: (
                        self.api(
                            "POST", "/memories", {"user_id": item[0], "content": item[1]}
                        ).status
                    ),
                    items,
                )
            )
        bad = [s for s in statuses if s not in (200, 201)]
        if bad:
            raise RuntimeError(f"seeding failed: statuses {sorted(set(bad))}")
        for user_id in NAMESPACES:
            for n in range(SESSIONS_PER_NAMESPACE):
                session_id = f"{user_id}-s{n}"
                response = self.api(
                    "POST", "/sessions", {"user_id": user_id, "session_id": session_id}
                )
                if response.status != 201:
                    raise RuntimeError(f"session seeding failed: {response.data[:200]!r}")
                self.sessions.append(session_id)
        log(
            f"seeded {len(items)} memories and {len(self.sessions)} sessions in "
            f"{time.monotonic() - started:.1f} s"
        )

    # --- workload ----------------------------------------------------------------------------

    def request(self, kind: str, rng: random.Random):
        if kind == "recall":
            words = rng.sample(
                WORDS["topic"] + WORDS["service"] + WORDS["person"], rng.choice((2, 3))
            )
            return self.api(
                "POST",
                "/recall",
                {"user_id": rng.choice(NAMESPACES), "query": " ".join(words), "limit": 10},
            )
        if kind == "remember":
            return self.api(
                "POST",
                "/memories",
                {"user_id": rng.choice(NAMESPACES), "content": self.next_text()},
            )
        if kind == "append":
            return self.api(
                "POST",
                f"/sessions/{rng.choice(self.sessions)}/messages",
                {
                    "role": rng.choice(("user", "assistant")),
                    "content": f"message {rng.randrange(10**9)} about {rng.choice(WORDS['topic'])}",
                },
            )
        return self.pool.request(
            "GET", rng.choice(PAGES), headers={"Cookie": self.cookie_header}, redirect=False
        )

    def drive(self) -> dict:
        rate, duration = self.args.rate, self.args.duration
        total = int(rate * duration)
        rng = random.Random(11)
        mix = self.args.mix
        kinds = rng.choices([k for k, _ in mix], [w for _, w in mix], k=total)
        # kind, status, latency ms, lateness ms, due (s since begin)
        results: list[tuple[str, int, float, float, float]] = []
        errors: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

        def one(i: int, kind: str, due: float) -> None:
            start = time.monotonic()
            local_rng = random.Random(i)
            try:
                response = self.request(kind, local_rng)
                status = response.status
                ok = status < 400
            except urllib3.exceptions.HTTPError as exc:
                status, ok = 0, False
                with self.lock:
                    errors[kind][type(exc).__name__] += 1
            elapsed = (time.monotonic() - start) * 1000
            with self.lock:
                results.append((kind, status, elapsed, (start - due) * 1000, due - begin))
                if not ok and status:
                    errors[kind][str(status)] += 1

        log(f"driving {total} requests at {rate}/s for {duration} s")
        per_process_before = process_cpu_seconds(self.server.pid)
        cpu_before = (
            server_cpu_seconds(self.server.pid),
            redis_cpu_seconds(self.redis_url),
            time.process_time(),
        )
        with ThreadPoolExecutor(self.args.clients) as pool:
            begin = time.monotonic()
            for i, kind in enumerate(kinds):
                due = begin + i / rate
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                pool.submit(one, i, kind, due)
        wall = time.monotonic() - begin
        cpu_after = (
            server_cpu_seconds(self.server.pid),
            redis_cpu_seconds(self.redis_url),
            time.process_time(),
        )
        cpu = {
            name: (round((after - before) / wall, 2) if None not in (before, after) else None)
            for name, before, after in zip(
                ("gunicorn", "redis", "load_client"), cpu_before, cpu_after, strict=True
            )
        }
        # How evenly the gunicorn processes shared the work: one busy process is one GIL.
        per_process_after = process_cpu_seconds(self.server.pid)
        cpu["gunicorn_processes"] = sorted(
            (round((t - per_process_before.get(pid, 0.0)) / wall, 2)
             for pid, t in per_process_after.items() if pid != self.server.pid),
            reverse=True,
        )
        return self.report(results, errors, wall, total, cpu)


def parse_mix(text: str) -> tuple[tuple[str, int], ...]:
    """``"recall=80,page=20"`` -> ``(("recall", 80), ("page", 20))``; kinds as in MIX."""
    mix = []
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        if kind not in dict(MIX) or not weight.isdigit():
            raise argparse.ArgumentTypeError(f"bad mix entry {part!r}: use kind=weight")
        mix.append((kind, int(weight)))
    return tuple(mix)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200, help="requests per second")
    parser.add_argument("--duration", type=float, default=30, help="seconds of load")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="gunicorn worker processes (default: memory_console/gunicorn_conf.py's)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads per gunicorn worker (default: memory_console/gunicorn_conf.py's)",
    )
    parser.add_argument("--clients", type=int, default=64, help="client threads")
    parser.add_argument("--seed-memories", type=int, default=2000)
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="run on PostgreSQL: a throw-away database is created through this server URL "
        "(e.g. postgres://postgres@127.0.0.1:5432/postgres) and dropped afterwards",
    )
    parser.add_argument(
        "--mix",
        type=parse_mix,
        default=MIX,
        help="kind=weight,... (default: recall=50,remember=20,append=20,page=10)",
    )
    args = parser.parse_args()
    from memory_console import gunicorn_conf  # the product's own defaults

    args.workers = args.workers or gunicorn_conf.workers
    args.threads = args.threads or gunicorn_conf.threads
    bench = Bench(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        bench.start()
        bench.seed()
        summary = bench.drive()
    finally:
        bench.stop()
    results_io.write_headline("load", title=f"Mixed API and page load at {args.rate} requests/s",
                              params=vars(args), headline=summary)
    print(json.dumps(summary, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
