"""The load benchmark's deployment: gunicorn, the job worker, a throw-away database and Redis
prefix (set up and torn down), and the CPU each process used. See bench/load.py."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PY = str(ROOT / ".venv" / "bin" / "python")
GUNICORN = str(ROOT / ".venv" / "bin" / "gunicorn")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def log(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


class LoadServer:
    """Start, run and stop the server under test; ``Bench`` (bench/load.py) sets the attributes."""

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
        for suffix in ("", "-wal", "-shm", ".writelock", ".worker.log"):
            Path(str(self.db) + suffix).unlink(missing_ok=True)
        if self.args.postgres:
            try:
                self.pg_admin(f'DROP DATABASE IF EXISTS "{self.pg_database}" WITH (FORCE)')
            except Exception as exc:  # noqa: BLE001 - reported, the run's figures stand
                log(f"could not drop {self.pg_database}: {exc}")
