"""What MCP costs over the REST API: the same recall three ways, timed query by query.

    .venv/bin/python bench/mcp_overhead.py [--data-dir ../shared/data] [--questions 150] [--rounds 2]

Starts gunicorn with the shipped config and production settings on a throw-away SQLite file
under ``var/bench/`` (Redis database 10 unless ``BENCH_REDIS_URL`` says otherwise, a key
prefix of its own), loads the first LoCoMo conversation through ``POST /api/v1/memories``
(one memory per turn), then asks its real questions, each one three ways in a rotating
order, ``--rounds`` times:

- ``rest``: ``POST /api/v1/recall`` with httpx (keep-alive);
- ``mcp_http``: the ``search_memories`` tool through the SDK's client at ``/mcp``;
- ``mcp_stdio``: the same tool through ``manage.py mcp_stdio``, spawned once.

Latency is from the call to the parsed answer, in ms. It prints p50/p90/p99 per route and,
last, one JSON line. Everything it started or wrote is removed at the end.
"""

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import httpx2
import redis
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT))

from bench import results_io  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def load_locomo(data_dir: Path, n_questions: int):
    sample = json.loads((data_dir / "locomo_dev.json").read_text())[0]
    conv = sample["conversation"]
    turns = [t for key, value in conv.items() if key.startswith("session_")
             and isinstance(value, list) for t in value]
    questions = []
    with (data_dir / "locomo_dev_qrels.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            if row["sample_id"] == sample["sample_id"]:
                questions.append(row["question"])
    return sample["sample_id"], turns, questions[:n_questions]


class Stack:
    """gunicorn + a throw-away database and Redis prefix; ``stop()`` removes them."""

    def __init__(self):
        self.db = ROOT / "var" / "bench" / f"mcp-{os.getpid()}.sqlite3"
        self.redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/10")
        self.prefix = f"mcbench-mcp-{os.getpid()}"
        self.base = f"http://127.0.0.1:{free_port()}"
        self.env = {**{k: v for k, v in os.environ.items()
                       if k not in {"DATABASE_URL", "REDIS_URL", "RQ_REDIS_URL"}},
                    "DJANGO_SETTINGS_MODULE": "memory_console.settings", "DEBUG": "0",
                    "SECURE_SSL_REDIRECT": "0", "SECRET_KEY": secrets.token_urlsafe(50),
                    "ALLOWED_HOSTS": "127.0.0.1,localhost", "DATABASE_URL": f"sqlite:///{self.db}",
                    "REDIS_URL": self.redis_url, "MEMORY_KEY_PREFIX": self.prefix,
                    "DB_CONN_MAX_AGE": "60", "LOG_LEVEL": "WARNING",
                    "PROMETHEUS_MULTIPROC_DIR": str(self.db) + ".metrics"}
        self.server = None

    def manage(self, *argv) -> str:
        done = subprocess.run([PY, "manage.py", *argv], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=300)
        if done.returncode:
            raise RuntimeError(f"manage.py {argv[0]} failed:\n{done.stderr[-2000:]}")
        return done.stdout

    def start(self) -> str:
        self.db.parent.mkdir(parents=True, exist_ok=True)
        self.manage("migrate", "--verbosity", "0")
        token = self.manage("create_api_token", "bench-mcp", "--role", "editor").split()[-1]
        self.server = subprocess.Popen(
            [PY, "-m", "gunicorn", "memory_console.wsgi", "-c",
             "python:memory_console.gunicorn_conf", "--bind", self.base.removeprefix("http://"),
             "--log-level", "warning"], cwd=ROOT, env=self.env, start_new_session=True)
        for _ in range(300):
            try:
                if httpx.get(self.base + "/healthz", timeout=2).status_code == 200:
                    return token
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("gunicorn did not answer /healthz")

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=30)
        client = redis.Redis.from_url(self.redis_url)
        keys = list(client.scan_iter(match=f"{self.prefix}:*", count=5000))
        for start in range(0, len(keys), 5000):
            client.delete(*keys[start:start + 5000])
        for suffix in ("", "-wal", "-shm", ".writelock"):
            Path(str(self.db) + suffix).unlink(missing_ok=True)
        metrics = Path(str(self.db) + ".metrics")
        for f in metrics.glob("*.db"):
            f.unlink()
        if metrics.exists():
            metrics.rmdir()


async def measure(stack: Stack, token: str, user_id: str, questions: list[str], rounds: int):
    auth = {"Authorization": f"Bearer {token}"}
    times = {"rest": [], "mcp_http": [], "mcp_stdio": []}
    http = httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(60.0))
    stdio_env = {**stack.env, "MEMORY_CONSOLE_TOKEN": token}
    stdio = StdioServerParameters(command=PY, args=["manage.py", "mcp_stdio"], env=stdio_env,
                                  cwd=str(ROOT))
    async with httpx.AsyncClient(base_url=stack.base, headers=auth, timeout=60) as rest, \
            Client(streamable_http_client(stack.base + "/mcp", http_client=http)) as mcp_http, \
            Client(stdio) as mcp_stdio:

        async def via_rest(q):
            r = await rest.post("/api/v1/recall", json={"user_id": user_id, "query": q,
                                                        "limit": 10})
            return [h["memory_id"] for h in r.json()["results"]]

        async def via(client, q):
            r = await client.call_tool("search_memories", {"user_id": user_id, "query": q,
                                                           "limit": 10})
            return [h["memory_id"] for h in r.structured_content["results"]]

        routes = [("rest", via_rest), ("mcp_http", lambda q: via(mcp_http, q)),
                  ("mcp_stdio", lambda q: via(mcp_stdio, q))]
        same = 0
        for n in range(rounds * len(questions)):
            q = questions[n % len(questions)]
            order = routes[n % 3:] + routes[:n % 3]
            answers = {}
            for name, fn in order:
                start = time.perf_counter()
                answers[name] = await fn(q)
                times[name].append((time.perf_counter() - start) * 1000)
            same += len({tuple(a) for a in answers.values()}) == 1
    return times, same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    user_id, turns, questions = load_locomo(args.data_dir, args.questions)
    stack = Stack()
    try:
        token = stack.start()
        with httpx.Client(base_url=stack.base,
                          headers={"Authorization": f"Bearer {token}"}) as rest:
            for t in turns:
                rest.post("/api/v1/memories", json={
                    "user_id": user_id, "content": f"{t['speaker']}: {t['text']}",
                    "metadata": {"dia_id": t["dia_id"]}}).raise_for_status()
        print(f"{len(turns)} memories in {user_id}, {len(questions)} questions x {args.rounds}")
        times, same = anyio.run(measure, stack, token, user_id, questions, args.rounds)
    finally:
        stack.stop()
    summary = {}
    for name, values in times.items():
        summary[name] = {"n": len(values), "p50": round(statistics.median(values), 2),
                         "p90": round(pct(values, 90), 2), "p99": round(pct(values, 99), 2)}
        print(f"{name:10} n={len(values)} p50={summary[name]['p50']} ms "
              f"p90={summary[name]['p90']} ms p99={summary[name]['p99']} ms")
    print(f"identical result lists on all three routes: {same}/{len(times['rest'])}")
    headline = {"routes": summary, "identical": same, "queries": len(times["rest"])}
    results_io.write_headline("mcp_overhead", title="The same recall over REST, MCP over HTTP and "
                              "MCP over stdio", params=vars(args), headline=headline)
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
