"""Every gunicorn worker loads the URLconf before it serves (``post_worker_init``,
``memory_console.worker_warm``), not on its first request; the master never does, and a step
that fails is only logged."""

import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from memory_console import worker_warm
from tests.test_encoder_preload import _workers
from tests.test_mcp import _database_url
from tests.test_metrics_gunicorn import _free_port

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
# Mapped by a process when it imports the URLconf: the MCP SDK's server behind /mcp
# (mcp.server.request_state) imports cryptography, whose bindings are this library. Nothing a
# worker loads when it boots maps it (the second test holds the marker to that).
READY = r"\[(\d+)\] \[INFO\] test: worker ready"  # gunicorn's log line: [time] [pid] [level]
MARKER = "cryptography/hazmat/bindings/_rust"
# The shipped config, its own post_worker_init run or not (``warm``), then a line in the log
# saying the worker is ready: when a worker says so it has run what it runs before serving.
CONFIG = """\
from memory_console import gunicorn_conf as shipped
from memory_console.gunicorn_conf import *  # noqa: F403


def post_worker_init(worker):
    if {warm} and hasattr(shipped, "post_worker_init"):
        shipped.post_worker_init(worker)
    worker.log.info("test: worker ready")
"""


def _maps_marker(pid: int) -> bool:
    return MARKER in Path(f"/proc/{pid}/maps").read_text()


def _start(tmp_path, warm: bool):
    """gunicorn on this test's database with :data:`CONFIG`; returns ``(url, Popen, worker
    pids)`` once every worker is ready, having sent it no request. The encoder is not
    preloaded: it is beside the point here and slows the start."""
    port = _free_port()
    log = tmp_path / f"gunicorn-{port}.log"
    config = tmp_path / f"conf_{port}.py"
    config.write_text(CONFIG.format(warm=warm))
    env = {**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
           "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX, "WEB_CONCURRENCY": str(WORKERS),
           "WEB_THREADS": "2", "WEB_PRELOAD_ENCODER": "0",
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / f"metrics-{port}")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(config), "--bind", f"127.0.0.1:{port}",
         "--error-logfile", str(log), "memory_console.wsgi:application"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(log.read_text())
        text = log.read_text() if log.exists() else ""
        pids = sorted({int(m) for m in re.findall(READY, text)})
        if len(pids) == WORKERS:
            assert pids == _workers(proc.pid), text
            return f"http://127.0.0.1:{port}", proc, pids
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"gunicorn's workers did not get ready:\n{log.read_text()}")


@pytest.fixture
def gunicorn(tmp_path):
    """``start(warm=True)`` → ``(url, master Popen, worker pids)`` (see ``_start``)."""
    started = []

    def start(warm=True):
        url, proc, pids = _start(tmp_path, warm)
        started.append(proc)
        return url, proc, pids

    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=120)


@pytest.mark.django_db(transaction=True)
def test_it_loads_the_urlconf_in_every_worker_before_any_request(gunicorn):
    _, master, workers = gunicorn()
    assert [_maps_marker(pid) for pid in workers] == [True] * WORKERS
    assert not _maps_marker(master.pid)  # the master stays free of the application


@pytest.mark.django_db(transaction=True)
def test_a_worker_without_the_warm_up_loads_it_on_its_first_request(gunicorn):
    """The control: the marker is what a first request loads, not what booting loads."""
    url, _, workers = gunicorn(warm=False)
    assert [_maps_marker(pid) for pid in workers] == [False] * WORKERS
    assert httpx.get(f"{url}/healthz", timeout=60).status_code == 200
    assert [_maps_marker(pid) for pid in workers].count(True) == 1  # the one that answered


def test_a_step_that_fails_is_logged_and_the_others_still_run(monkeypatch, caplog):
    ran = []

    def broken():
        raise ImportError("no module named 'mcp'")

    monkeypatch.setattr(worker_warm, "STEPS", (("URLconf", broken),
                                               ("stemmer", lambda: ran.append("stemmer"))))
    with caplog.at_level(logging.INFO, logger="memory_console.worker_warm"):
        assert worker_warm.warm() == ["stemmer"]
    assert ran == ["stemmer"]
    assert "could not warm the URLconf" in caplog.text and "no module named" in caplog.text
    assert "worker warmed (stemmer)" in caplog.text


def test_it_warms_this_process(caplog):
    with caplog.at_level(logging.INFO, logger="memory_console.worker_warm"):
        assert worker_warm.warm() == ["URLconf", "URL names", "stemmer"]
    assert "snowballstemmer" in sys.modules and "memory_console.urls" in sys.modules
