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
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import redis
import requests
import urllib3

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.corpus import WORDS, memory_texts  # noqa: E402

PY = str(ROOT / ".venv" / "bin" / "python")
GUNICORN = str(ROOT / ".venv" / "bin" / "gunicorn")
MIX = (("recall", 50), ("remember", 20), ("append", 20), ("page", 10))
NAMESPACES = [f"bench-u{n}" for n in range(10)]
SESSIONS_PER_NAMESPACE = 3
PAGES = ("/", "/memories/", "/sessions/", "/search/?user_id=bench-u0&q=billing")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Bench:
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

    # --- set-up ------------------------------------------------------------------------------

    def manage(self, *argv: str) -> str:
        result = subprocess.run(
            [PY, "manage.py", *argv],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(argv)} failed:\n{result.stderr[-2000:]}")
        return result.stdout

    def database_url(self) -> str:
        if not self.args.postgres:
            return f"sqlite:///{self.db}"
        return urlunsplit(urlsplit(self.args.postgres)._replace(path="/" + self.pg_database))

    def pg_admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.args.postgres, autocommit=True) as conn:
            conn.execute(sql)

    def start(self) -> None:
        self.db.parent.mkdir(parents=True, exist_ok=True)
        redis.Redis.from_url(self.redis_url).ping()
        if self.args.postgres:
            self.pg_admin(f'CREATE DATABASE "{self.pg_database}"')
        shown = self.database_url() if self.args.postgres else self.db.relative_to(ROOT)
        log(f"database {shown}, redis {self.redis_url} prefix {self.prefix}")
        self.manage("migrate", "--verbosity", "0")
        self.manage("collectstatic", "--noinput", "--verbosity", "0")  # the manifest pages need
        self.token = (
            self.manage("create_api_token", "bench-agent", "--role", "admin", "--name", "load")
            .strip()
            .splitlines()[-1]
        )
        self.manage(
            "createsuperuser",
            "--noinput",
            "--username",
            "bench-admin",
            "--email",
            "bench@example.com",
        )
        cmd = [
            GUNICORN,
            "memory_console.wsgi",
            "--config",
            "python:memory_console.gunicorn_conf",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(self.args.workers),
            "--threads",
            str(self.args.threads),
            "--log-level",
            "warning",
            "--timeout",
            "60",
        ]
        log(f"gunicorn on {self.base}: {self.args.workers} workers x {self.args.threads} threads")
        self.server = subprocess.Popen(cmd, cwd=ROOT, env=self.env, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.server.returncode}")
            try:
                if requests.get(self.base + "/healthz", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.2)
        else:
            raise RuntimeError("gunicorn did not answer /healthz within 30 s")
        # The worker runs beside it, as in production: its periodic jobs include the fold
        # of recall hits into the database every MEMORY_ACCESS_FOLD_SECONDS.
        self.manage("schedule_periodic")
        self.worker_log = Path(str(self.db) + ".worker.log").open("w")  # noqa: SIM115 - closed in stop()
        self.worker = subprocess.Popen(
            [PY, "manage.py", "rqworker", "default", "index", "--with-scheduler"],
            cwd=ROOT,
            env=self.env,
            start_new_session=True,
            stdout=self.worker_log,
            stderr=subprocess.STDOUT,
        )
        time.sleep(1)
        if self.worker.poll() is not None:
            raise RuntimeError(f"the worker exited with {self.worker.returncode}")
        self.login()

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

    def report(self, results, errors, wall: float, total: int, cpu: dict) -> dict:
        per_kind = {}
        print(
            f"\n{'kind':<9} {'count':>6} {'errors':>6} {'p50':>8} {'p90':>8} {'p99':>8} "
            f"{'max':>8}   (ms)"
        )
        for kind, _ in self.args.mix:
            lat = sorted(r[2] for r in results if r[0] == kind)
            if not lat:
                continue
            n_err = sum(errors[kind].values())
            row = {
                "count": len(lat),
                "errors": n_err,
                "p50": pct(lat, 50),
                "p90": pct(lat, 90),
                "p99": pct(lat, 99),
                "max": round(lat[-1], 2),
            }
            if errors[kind]:
                row["error_kinds"] = dict(errors[kind])
            per_kind[kind] = row
            print(
                f"{kind:<9} {row['count']:>6} {n_err:>6} {row['p50']:>8} {row['p90']:>8} "
                f"{row['p99']:>8} {row['max']:>8}"
            )
        windows = []
        for w in range(int(self.args.duration // 5) + 1):
            lat = sorted(r[2] for r in results if w * 5 <= r[4] < (w + 1) * 5)
            if lat:
                windows.append({"t": w * 5, "p50": pct(lat, 50), "p99": pct(lat, 99)})
        print(
            "timeline (all kinds, by scheduled second): "
            + "; ".join(f"{w['t']}s p50 {w['p50']} p99 {w['p99']}" for w in windows)
        )
        lateness = sorted(r[3] for r in results)
        done = len(results)
        summary = {
            "bench": "load",
            "target_rate": self.args.rate,
            "duration_s": self.args.duration,
            "requests": total,
            "completed": done,
            "errors": sum(sum(e.values()) for e in errors.values()),
            "throughput_rps": round(done / wall, 1),
            "recall_p50_ms": per_kind.get("recall", {}).get("p50"),
            "recall_p99_ms": per_kind.get("recall", {}).get("p99"),
            "send_late_p99_ms": pct(lateness, 99),
            "database": "postgresql" if self.args.postgres else "sqlite",
            "gunicorn": f"{self.args.workers}x{self.args.threads} gthread",
            "cpus": os.cpu_count(),
            "cpu_cores_busy": cpu,
            "per_kind": per_kind,
            "timeline": windows,
        }
        summary["target_met"] = (
            summary["errors"] == 0
            and summary["recall_p99_ms"] is not None
            and summary["recall_p99_ms"] <= 50
        )
        print(
            f"\nthroughput {summary['throughput_rps']} req/s over {wall:.1f} s "
            f"(target {self.args.rate}/s); {summary['errors']} errors; "
            f"sends started late by p99 {summary['send_late_p99_ms']} ms"
        )
        print(
            f"CPU cores busy (of {os.cpu_count()}): "
            + ", ".join(f"{name} {value}" for name, value in cpu.items())
        )
        return summary

    # --- clean-up ----------------------------------------------------------------------------

    def folds_logged(self) -> int | None:
        """How many periodic access-count folds the worker finished (from its log)."""
        path = Path(str(self.db) + ".worker.log")
        if not path.exists():
            return None
        return path.read_text(errors="replace").count("Job OK (periodic-access-fold)")

    def forget_jobs(self) -> None:
        """Empty the job queues and drop the periodic jobs this run scheduled."""
        from rq import Queue
        from rq.registry import ScheduledJobRegistry

        try:
            connection = redis.Redis.from_url(self.redis_url)
            for name in ("default", "index"):
                queue = Queue(name, connection=connection)
                queue.empty()
                registry = ScheduledJobRegistry(queue=queue)
                for job_id in registry.get_job_ids():
                    registry.remove(job_id, delete_job=True)
        except redis.RedisError as exc:
            log(f"could not remove the bench jobs: {exc}")

    def stop(self) -> None:
        for process in (self.server, self.worker):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)  # its own process group
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        if self.worker_log is not None:
            self.worker_log.close()
        self.forget_jobs()
        try:
            client = redis.Redis.from_url(self.redis_url)
            batch = list(client.scan_iter(match=f"{self.prefix}:*", count=5000))
            for start in range(0, len(batch), 5000):
                client.delete(*batch[start : start + 5000])
        except redis.RedisError as exc:
            log(f"could not remove the bench keys: {exc}")
        folds = self.folds_logged()
        if folds is not None:
            log(f"the worker ran {folds} access-count folds")
        for suffix in ("", "-wal", "-shm", ".worker.log"):
            Path(str(self.db) + suffix).unlink(missing_ok=True)
        if self.args.postgres:
            try:
                self.pg_admin(f'DROP DATABASE IF EXISTS "{self.pg_database}" WITH (FORCE)')
            except Exception as exc:  # noqa: BLE001 - reported, the run's figures stand
                log(f"could not drop {self.pg_database}: {exc}")


def process_cpu_seconds(pgid: int) -> dict[int, float]:
    """CPU time (user + system, seconds) of each process in a process group (Linux /proc)."""
    out = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return out
    for entry in entries:
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields[2] is pgrp (field 5 of stat)
            out[int(entry)] = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
    return out


def server_cpu_seconds(pgid: int) -> float | None:
    """CPU time of a whole process group; None where /proc is missing."""
    per_process = process_cpu_seconds(pgid)
    return sum(per_process.values()) if per_process else None


def redis_cpu_seconds(url: str) -> float | None:
    try:
        info = redis.Redis.from_url(url).info("cpu")
        return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    except (redis.RedisError, KeyError):
        return None


def pct(sorted_values: list[float], p: float) -> float | None:
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return round(sorted_values[0], 2)
    return round(
        statistics.quantiles(sorted_values, n=1000, method="inclusive")[min(998, int(p * 10) - 1)],
        2,
    )


def parse_mix(text: str) -> tuple[tuple[str, int], ...]:
    """``"recall=80,page=20"`` -> ``(("recall", 80), ("page", 20))``; kinds as in MIX."""
    mix = []
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        if kind not in dict(MIX) or not weight.isdigit():
            raise argparse.ArgumentTypeError(f"bad mix entry {part!r}: use kind=weight")
        mix.append((kind, int(weight)))
    return tuple(mix)


def log(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


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
    print(json.dumps(summary, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
