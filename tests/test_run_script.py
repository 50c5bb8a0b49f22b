"""scripts/run on a fresh database: gunicorn (the shipped config) by default, runserver only
with ``--dev``; the worker starts beside it and both stop with the script.

Each case runs the real script against a throw-away SQLite file, this run's test Redis and a
key prefix of its own (no demo data: ``SKIP_DEMO=1`` keeps it short), and looks at the
``Server`` header the web server answers with.
"""

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from rq.exceptions import NoSuchJobError
from rq.job import Job

from memories import queue as job_queue
from memories import store

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "gunicorn").exists(),
                                reason="needs the project's .venv with gunicorn")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"scripts/run exited with {proc.returncode}")
        try:
            return urllib.request.urlopen(url, timeout=2)
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"nothing answered at {url}")


@pytest.fixture
def run_script(tmp_path):
    """Start scripts/run with extra arguments/environment; stop it and clean up afterwards."""
    started = []
    prefix = settings.MEMORY_KEY_PREFIX + "-run"

    def start(*args, **env):
        port = _free_port()
        environ = {k: v for k, v in os.environ.items()
                   if k not in ("DJANGO_SETTINGS_MODULE", "RQ_REDIS_URL")}
        environ.update({
            "PORT": str(port), "SKIP_DEMO": "1", "REDIS_URL": settings.REDIS_URL,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "MEMORY_KEY_PREFIX": prefix, "WEB_CONCURRENCY": "1", "WEB_THREADS": "2", **env})
        proc = subprocess.Popen([str(ROOT / "scripts" / "run"), *args], cwd=ROOT, env=environ,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        started.append(proc)
        return proc, f"http://127.0.0.1:{port}"

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    client = store.get_client()
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)
    # schedule_periodic put the periodic jobs on this Redis: no later test may meet them.
    from operations.jobs import (
        PERIODIC_ACCESS_FOLD_ID,
        PERIODIC_RECALL_LOG_ID,
        PERIODIC_RECONCILE_ID,
    )

    for job_id in (PERIODIC_RECONCILE_ID, PERIODIC_ACCESS_FOLD_ID, PERIODIC_RECALL_LOG_ID):
        with contextlib.suppress(NoSuchJobError):
            Job.fetch(job_id, connection=job_queue.get_connection()).delete()


def _children(proc: subprocess.Popen) -> dict[int, str]:
    """The script's descendant processes: ``{pid: command line}`` (the worker runs under
    the script's supervising subshell)."""
    out = subprocess.run(["ps", "-o", "pid=,ppid=,args=", "-e"], capture_output=True,
                         text=True, check=False).stdout
    rows = [line.split(None, 2) for line in out.splitlines()]
    parent = {int(r[0]): int(r[1]) for r in rows}
    args = {int(r[0]): r[2] if len(r) > 2 else "" for r in rows}

    def descends(pid: int) -> bool:
        while pid in parent and pid > 1:
            pid = parent[pid]
            if pid == proc.pid:
                return True
        return False

    return {pid: line for pid, line in args.items() if descends(pid)}


def _workers(proc: subprocess.Popen) -> set[int]:
    """The script's RQ worker processes (the worker itself, not its scheduler)."""
    return {pid for pid, line in _children(proc).items() if "manage.py jobworker" in line}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_it_serves_with_gunicorn_and_starts_the_worker(run_script):
    proc, url = run_script()
    response = _wait_for(url + "/healthz", proc)
    assert response.status == 200
    assert response.headers["Server"].startswith("gunicorn")
    # The console itself answers (login page), static files through WhiteNoise.
    login = urllib.request.urlopen(url + "/accounts/login/", timeout=5)
    assert login.status == 200 and b"<form" in login.read()
    children = _children(proc)
    assert any("jobworker" in c for c in children.values()), children
    assert any("gunicorn" in c for c in children.values()), children
    proc.send_signal(signal.SIGTERM)  # the script alone: it must stop both
    assert proc.wait(timeout=60) == 143
    assert not [pid for pid in children if _alive(pid)]


def test_it_starts_the_worker_again_when_it_dies(run_script):
    """A worker that exits (killed here; a fault it did not survive in life) is started
    again, and SIGTERM still stops everything (issue 26: reconcile, reindex, webhooks and
    folds stopped silently)."""
    proc, url = run_script()
    _wait_for(url + "/healthz", proc)
    deadline = time.monotonic() + 60
    while not (first := _workers(proc)):
        assert time.monotonic() < deadline, _children(proc)
        time.sleep(0.2)
    for pid in first:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while not (again := _workers(proc) - first):
        assert time.monotonic() < deadline, "the worker was not started again"
        time.sleep(0.2)
    children = _children(proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    assert not [pid for pid in children if _alive(pid)]
    assert not [pid for pid in again if _alive(pid)]


def test_it_runs_runserver_only_with_the_dev_flag(run_script):
    proc, url = run_script("--dev")
    response = _wait_for(url + "/healthz", proc)
    assert response.status == 200
    assert response.headers["Server"].startswith("WSGIServer")


def test_it_refuses_an_unknown_argument(run_script):
    proc, _ = run_script("--bogus")
    assert proc.wait(timeout=120) != 0
    assert b"unknown argument: --bogus" in proc.stdout.read()
