"""The deployment bench/recall.py measures: production settings on a throw-away SQLite file
and Redis prefix (shared by the in-process search and gunicorn), gunicorn as shipped
(``memory_console/gunicorn_conf.py``), and the HTTP calls it times."""

import atexit
import contextlib
import json
import multiprocessing
import os
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path

import urllib3

from bench.load_server import GUNICORN, ROOT, free_port


class Deployment:
    """Environment of one run: the database file, Redis URL and prefix (cleaned at exit).

    ``BENCH_DB_FILE`` and ``BENCH_KEY_PREFIX`` name a kept corpus instead (built by an
    earlier run with them, left in place at the end): a size is ingested once and timed
    many times."""

    def __init__(self, name: str):
        pid = os.getpid()
        self.kept = bool(os.environ.get("BENCH_DB_FILE") and os.environ.get("BENCH_KEY_PREFIX"))
        self.db = Path(os.environ["BENCH_DB_FILE"]) if self.kept else (
            ROOT / "var" / "bench" / f"{name}-{pid}.sqlite3")
        self.db.parent.mkdir(parents=True, exist_ok=True)
        self.prefix = os.environ["BENCH_KEY_PREFIX"] if self.kept else f"mcbench-{name}-{pid}"
        self.env = {
            **{k: v for k, v in os.environ.items()
               if k not in {"DATABASE_URL", "REDIS_URL", "RQ_REDIS_URL"}},
            "DJANGO_SETTINGS_MODULE": "memory_console.settings",
            "DEBUG": "0", "SECURE_SSL_REDIRECT": "0", "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost", "DATABASE_URL": f"sqlite:///{self.db}",
            "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/10"),
            # Serving index snapshots live under this prefix too (search/serving/snapshot.py):
            # the run's first process builds each index (timed), its HTTP workers load it.
            "MEMORY_KEY_PREFIX": self.prefix, "LOG_LEVEL": "WARNING", "DB_CONN_MAX_AGE": "60",
        }
        self.env["RQ_REDIS_URL"] = self.env["REDIS_URL"]

    def setup_django(self) -> None:
        os.environ.update(self.env)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        atexit.register(self.cleanup)  # also when the run fails half-way

    def cleanup(self) -> None:
        if self.kept:
            return
        from memories import store

        client = store.get_client()
        batch = []
        for key in client.scan_iter(match=f"{self.prefix}:*", count=5000):
            batch.append(key)
            if len(batch) >= 5000:
                client.delete(*batch)
                batch = []
        if batch:
            client.delete(*batch)
        for suffix in ("", "-wal", "-shm", ".writelock"):
            Path(str(self.db) + suffix).unlink(missing_ok=True)


class Server:
    """gunicorn on a free loopback port with the product's config (or ``config``, a
    gunicorn ``--config`` value), and its API calls."""

    def __init__(self, deploy: Deployment, token: str,
                 config: str = "python:memory_console.gunicorn_conf"):
        self.deploy, self.token, self.config = deploy, token, config
        self.port = free_port()
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.pool = urllib3.HTTPConnectionPool("127.0.0.1", self.port, maxsize=16, block=True,
                                               timeout=urllib3.Timeout(total=120), retries=False)
        self.proc = None

    def start(self) -> None:
        cmd = [GUNICORN, "memory_console.wsgi", "--config", self.config,
               "--bind", f"127.0.0.1:{self.port}", "--log-level", "warning", "--timeout", "120"]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.deploy.env, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.pool.request("GET", "/healthz").status == 200:
                    return
            except urllib3.exceptions.HTTPError:
                time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer /healthz")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)

    def post(self, path: str, body) -> dict:
        r = self.pool.request("POST", "/api/v1" + path, body=json.dumps(body).encode(),
                              headers=self.headers)
        if r.status >= 300:
            raise RuntimeError(f"{path}: {r.status} {r.data[:300]!r}")
        return json.loads(r.data)

    def recall(self, ns: str, query: str, profile: str | None) -> dict:
        body = {"user_id": ns, "query": query, "limit": 10}
        if profile:
            body["profile"] = profile
        return self.post("/recall", body)

    def warm(self, ns: str, queries: list[str]) -> None:
        """Enough recalls, several at once, that every process has built its indexes."""
        def go(q):
            for profile in ("bm25", None):
                self.recall(ns, q, profile)
        threads = [threading.Thread(target=go, args=(q,)) for q in queries[:12]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for q in queries:
            go(q)

    @contextlib.contextmanager
    def writer(self, ns: str, rate: float, items: list[dict]):
        """A live writer (:class:`LiveWriter`, paused until ``on()``): ``POST /memories`` at
        ``rate`` per second of ``items`` in turn (``content`` and ``conversation_id``; the
        server builds each context, and the turn before gains this one in its own, as an
        agent's turns do), from a process of its own, as an agent is: a thread of the
        measuring process would take its GIL and CPU from the recalls it times."""
        ctx = multiprocessing.get_context("spawn")
        live = LiveWriter(ctx)
        proc = ctx.Process(target=_write_loop, daemon=True, args=(
            self.port, self.headers, ns, rate, items, secrets.token_hex(3), live.active,
            live.stop, live.results))
        proc.start()
        try:
            yield live
        finally:
            live.stop.set()
            live.active.set()
            live.stats = live.results.get(timeout=60)
            proc.join(timeout=30)
            # Released now: the run leaves through os._exit, which frees nothing.
            live.active = live.stop = live.results = None

    def import_rate(self, ns: str, items: list[dict], per_request: int = 1000) -> float:
        """``POST /import`` (merge) in documents of ``per_request`` memories (the body limit
        is ~2.5 MB); memories per second over all of them."""
        t = time.perf_counter()
        for s in range(0, len(items), per_request):
            self.post("/import", {"schema_version": 2, "user_id": ns, "memories": [
                {"user_id": ns, "importance": 0.5, **it} for it in items[s:s + per_request]]})
        return len(items) / (time.perf_counter() - t)

    def create_rate(self, ns: str, clients: int, seconds: float) -> float:
        """Single creates per second with ``clients`` concurrent clients."""
        counts = [0] * clients
        deadline = time.perf_counter() + seconds

        def run(c):
            while time.perf_counter() < deadline:
                self.post("/memories", {"user_id": ns, "content":
                                        f"create {c} {counts[c]} {secrets.token_hex(6)} note"})
                counts[c] += 1

        started = time.perf_counter()
        threads = [threading.Thread(target=run, args=(c,)) for c in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sum(counts) / (time.perf_counter() - started)

    def worker_rss_mb(self) -> list[float]:
        """Resident memory of each gunicorn worker (MB)."""
        out = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[2]) == self.proc.pid and int(entry.name) != self.proc.pid:
                    rss = [ln for ln in (entry / "status").read_text().splitlines()
                           if ln.startswith("VmRSS")][0]
                    out.append(round(int(rss.split()[1]) / 1024, 1))
            except (OSError, IndexError):
                continue
        return sorted(out)


class LiveWriter:
    """The switch of a writer process (:meth:`Server.writer`): ``on()``, ``off()``; once the
    block is left, ``stats`` holds ``{"ms": [write latencies], "rate": writes per second
    while on}``."""

    def __init__(self, ctx):
        self.active, self.stop, self.results = ctx.Event(), ctx.Event(), ctx.Queue()
        self.stats: dict = {}

    def on(self) -> None:
        self.active.set()

    def off(self) -> None:
        self.active.clear()


def _write_loop(port, headers, ns, rate, items, tag, active, stop, results) -> None:
    """The writer process's loop: while ``active``, one create every ``1 / rate`` s."""
    pool = urllib3.HTTPConnectionPool("127.0.0.1", port, maxsize=1,
                                      timeout=urllib3.Timeout(total=120), retries=False)
    ms, n, on_for = [], 0, 0.0
    while not stop.is_set():
        if not active.wait(0.05):
            continue
        started, done = time.perf_counter(), 0
        while active.is_set() and not stop.is_set():
            t = time.perf_counter()
            item = items[n % len(items)]
            conversation = item["conversation_id"]
            body = {"user_id": ns, "content": item["content"],
                    "conversation_id": f"live-{tag}-{n // len(items)}-{conversation}"
                    if conversation else None}
            r = pool.request("POST", "/api/v1/memories", body=json.dumps(body).encode(),
                             headers=headers)
            if r.status >= 300:
                raise RuntimeError(f"/memories: {r.status} {r.data[:300]!r}")
            ms.append((time.perf_counter() - t) * 1000)
            n, done = n + 1, done + 1
            time.sleep(max(0.0, started + done / rate - time.perf_counter()))
        on_for += time.perf_counter() - started
    results.put({"ms": ms, "rate": len(ms) / on_for if on_for else 0.0})
