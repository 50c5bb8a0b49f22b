"""Under gunicorn as shipped (several processes, multiprocess metric files): ``/metrics``
adds up what every process counted, a previous run's files are gone at start, and the MCP
endpoint answers the SDK's client from any process."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from django.conf import settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from accounts.tokens import token_create
from memories.models import Memory
from tests.test_mcp import _database_url

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.django_db(transaction=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def gunicorn(django_db_setup, tmp_path_factory):
    """A gunicorn (the shipped config, 2 processes of 1 thread) on the test database, one for
    the module's tests (starting it is most of their time); each test commits its own rows."""
    tmp_path = tmp_path_factory.mktemp("gunicorn")
    web_dir, worker_dir = tmp_path / "web", tmp_path / "worker"
    web_dir.mkdir()
    (web_dir / "counter_999999.db").write_bytes(b"left by an earlier run")
    port = _free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ["DJANGO_SETTINGS_MODULE"],
           "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
           "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX, "WEB_CONCURRENCY": "2",
           "WEB_THREADS": "1", "PROMETHEUS_MULTIPROC_DIR": str(web_dir),
           "METRICS_EXTRA_DIRS": str(worker_dir), "WEB_REQUEST_READ_SECONDS": "3",
           # where gunicorn would put its control socket (test_it_opens_no_control_socket)
           "XDG_RUNTIME_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:memory_console.gunicorn_conf",
         "--bind", f"127.0.0.1:{port}", "memory_console.wsgi:application"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        # Up when both processes have served a request (each then has its metric files).
        # One request at a time, with a long read timeout: a request that timed out would
        # still be served later and counted among the test's own.
        for _ in range(600):
            try:
                httpx.get(f"{url}/healthz", timeout=60)
            except httpx.ConnectError:
                time.sleep(0.1)
            if len(_pids(web_dir)) == 2:
                break
        else:
            raise AssertionError(proc.stderr.read1().decode() if proc.stderr else "no start")
        yield url, web_dir
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _pids(web_dir: Path) -> set[str]:
    return {p.stem.rsplit("_", 1)[-1] for p in web_dir.glob("histogram_*.db")}


def _samples(text: str, name: str) -> list:
    return [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == name]


def test_every_process_counts_and_mcp_answers(gunicorn, editor, viewer):
    url, web_dir = gunicorn
    assert not (web_dir / "counter_999999.db").exists()
    token = token_create(user=viewer)

    def healthz_count() -> float:
        text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {token}"}).text
        served = _samples(text, "memory_console_http_request_duration_seconds_count")
        return sum(s.value for s in served if s.labels["view"] == "healthz")

    before = healthz_count()

    def ping(_):
        with httpx.Client(timeout=60) as client:  # a new connection each time
            return client.get(f"{url}/healthz").status_code

    with ThreadPoolExecutor(4) as pool:
        assert set(pool.map(ping, range(40))) == {200}
    assert len(_pids(web_dir)) == 2  # one set of files per process

    assert healthz_count() - before == 40  # the sum over both processes, each request once

    editor_token = token_create(user=editor)

    async def remember():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {editor_token}"})
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            added = await client.call_tool("add_memory", {"user_id": "alice",
                                                          "content": "served by gunicorn"})
            found = await client.call_tool("search_memories", {"user_id": "alice",
                                                               "query": "gunicorn"})
            return added.structured_content, found.structured_content

    added, found = anyio.run(remember)
    assert [r["memory_id"] for r in found["results"]] == [added["memory_id"]]
    assert Memory.objects.get().content == "served by gunicorn"


def test_it_opens_no_control_socket_that_two_servers_would_share(gunicorn):
    """gunicorn's control socket has one path per machine user ($XDG_RUNTIME_DIR or
    ~/.gunicorn): a second checkout's server (or a test's) would take it over."""
    _url, web_dir = gunicorn
    assert not list(web_dir.parent.rglob("gunicorn.ctl"))


def test_gunicorn_takes_long_query_strings_and_refuses_longer_ones_in_json(gunicorn, viewer):
    """The request line may be 8,190 bytes (gunicorn's default 4,094 refused a 7 kB query
    string the API takes); over that, and for headers over the limits, gunicorn's own
    refusal is the API's JSON error, not an HTML page."""
    url, _ = gunicorn
    auth = {"Authorization": f"Bearer {token_create(user=viewer)}"}
    fits = httpx.get(f"{url}/api/v1/memories", headers=auth,
                     params={"user_id": "alice", "metadata.note": "x" * 7000})
    assert fits.status_code == 200 and fits.json()["memories"] == []
    too_long = httpx.get(f"{url}/api/v1/memories?user_id=alice&q={'x' * 10_000}", headers=auth)
    assert too_long.status_code == 414
    assert too_long.headers["content-type"] == "application/json"
    error = too_long.json()["error"]
    assert (error["code"], error["limit"], error["field"]) == ("uri_too_long", 8190, None)
    big_header = httpx.get(f"{url}/api/v1/memories?user_id=alice",
                           headers={**auth, "X-Big": "x" * 9000})
    assert big_header.status_code == 431
    assert big_header.json()["error"]["code"] == "headers_too_large"


def _slow_client(url: str, body: bool) -> socket.socket:
    """A connection that sends the start of a request and then one byte every 0.5 s."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    if body:
        sock.sendall(b"POST /api/v1/recall HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 1000\r\n\r\n{")
    else:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    return sock


def test_slow_clients_hold_no_thread_past_the_read_deadline(gunicorn):
    """Two processes of one thread each: four clients trickling their headers or body (a
    slowloris) took every thread for as long as they kept sending. Each request now has 3 s
    (WEB_REQUEST_READ_SECONDS) to arrive: the slow ones are answered 408 / 400 and closed,
    and the server answers others meanwhile."""
    url, _ = gunicorn
    slow = [_slow_client(url, body=n % 2 == 1) for n in range(4)]
    started = time.monotonic()
    answers = {}
    try:
        # Four slow requests on two threads: two rounds of 3 s each, and room for a loaded
        # machine; without a deadline none is ever answered.
        while time.monotonic() - started < 40 and len(answers) < len(slow):
            for n, sock in enumerate(slow):
                if n in answers:
                    continue
                try:
                    sock.settimeout(0.05)
                    got = sock.recv(4096)
                    answers[n] = got
                    continue
                except TimeoutError:
                    pass
                with contextlib.suppress(OSError):
                    sock.sendall(b"X-Slow: 1\r\n" if n % 2 == 0 else b" ")
            time.sleep(0.5)
        healthy = httpx.get(f"{url}/healthz", timeout=10)
    finally:
        for sock in slow:
            sock.close()
    assert len(answers) == len(slow), f"still held after 40 s: {len(slow) - len(answers)}"
    heads = [answers[n].split(b"\r\n", 1)[0] for n in range(len(slow))]
    assert all(h.startswith(b"HTTP/1.1 408") for h in heads[0::2]), heads
    assert all(h.split()[1] in (b"400", b"408") for h in heads[1::2]), heads
    assert b"request_timeout" in answers[0]
    assert healthy.status_code == 200


def test_a_command_run_with_a_metrics_dir_not_made_yet_works(tmp_path):
    """compose runs ``migrate`` with the web's PROMETHEUS_MULTIPROC_DIR before gunicorn
    has made it: the command makes it instead of failing."""
    missing = tmp_path / "not" / "yet"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(missing),
           "DATABASE_URL": _database_url()}
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert missing.is_dir()
