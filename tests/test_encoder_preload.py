"""The gunicorn master loads the encoder before it forks the web workers
(``memory_console.encoder_preload``): every worker holds it before any recall, answers a
rescoring recall on encoding threads of its own and leaves cleanly when gunicorn stops;
``WEB_PRELOAD_ENCODER=0`` and a failed load leave the workers to load it on their first
rescoring recall, as before."""

import logging
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from accounts.tokens import token_create
from memory_console import encoder_preload
from search import embeddings
from tests.helpers import create
from tests.test_mcp import _database_url
from tests.test_metrics_gunicorn import _free_port

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
# Mapped into a process by the encoder's session only (search.semantic.encoder._session):
# nothing else imports onnxruntime, so a worker that maps it before any recall inherited it.
ORT_LIBRARY = "onnxruntime_pybind11_state"


def _workers(master: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == master:  # stat's 4th field, the parent's pid
                out.append(int(entry.name))
    return sorted(out)


def _holds_session(pid: int) -> bool:
    return ORT_LIBRARY in Path(f"/proc/{pid}/maps").read_text()


def _stop(proc) -> str:
    """Stop gunicorn gracefully (SIGTERM) and give its log."""
    proc.terminate()
    _, log = proc.communicate(timeout=120)
    return log.decode()


@pytest.fixture
def start_gunicorn(tmp_path):
    """``start(**env)`` → ``(url, master Popen, worker pids)``: gunicorn with the shipped
    config on this test's database, up when it answers /healthz and has all its workers."""
    started = []

    def start(**extra):
        port = _free_port()
        env = {**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
               "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX,
               "WEB_CONCURRENCY": str(WORKERS), "WEB_THREADS": "2",
               "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / f"metrics-{port}"), **extra}
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "python:memory_console.gunicorn_conf",
             "--bind", f"127.0.0.1:{port}", "memory_console.wsgi:application"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append(proc)
        url = f"http://127.0.0.1:{port}"
        for _ in range(1200):
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode())
            try:
                if (httpx.get(f"{url}/healthz", timeout=60).status_code == 200
                        and len(_workers(proc.pid)) == WORKERS):
                    return url, proc, _workers(proc.pid)
            except httpx.ConnectError:
                pass
            time.sleep(0.1)
        raise AssertionError("gunicorn did not start")

    yield start
    for proc in started:
        if proc.poll() is None:
            _stop(proc)


@pytest.mark.django_db(transaction=True)
def test_it_loads_the_encoder_in_the_master_for_every_worker(start_gunicorn, viewer):
    """The memories are embedded first, so a default-profile recall rescores: it runs in a
    forked worker, on that worker's own encoding thread (a thread lost in the fork would
    leave the recall waiting forever). On SIGTERM every worker exits with status 0: one that
    ran onnxruntime's static destructors would abort or hang until gunicorn killed it."""
    for n, text in enumerate(["Calvin relaxes by playing guitar in his studio",
                              "Calvin relaxes by the sea after work",
                              "the guitar studio is above the garage"]):
        create(text, user_id=f"u-{n % 2}")
    assert embeddings.embed_pending() == 3
    url, proc, workers = start_gunicorn()
    assert _holds_session(proc.pid)
    assert [_holds_session(pid) for pid in workers] == [True] * WORKERS  # before any recall

    headers = {"Authorization": f"Bearer {token_create(user=viewer)}"}

    def recall(n):
        with httpx.Client(timeout=60) as client:  # a new connection each: any worker answers
            r = client.post(f"{url}/api/v1/recall", headers=headers, json={
                "user_id": f"u-{n % 2}", "query": f"how does Calvin relax {n}"})
        assert r.status_code == 200, r.text
        return r.json()

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(recall, range(8)))
    assert {a["profile"] for a in answers} == {"context"}
    assert all(h["explain"]["semantic"] is not None for a in answers for h in a["results"])
    assert all(a["results"] for a in answers)

    log = _stop(proc)
    assert proc.returncode == 0, log
    assert "terminate called" not in log and "was sent" not in log, log  # SIGABRT, SIGKILL
    assert log.count("Worker exiting") == WORKERS, log


@pytest.mark.django_db(transaction=True)
def test_it_leaves_the_workers_to_load_it_when_switched_off(start_gunicorn):
    _, proc, workers = start_gunicorn(WEB_PRELOAD_ENCODER="0")
    assert [_holds_session(pid) for pid in [proc.pid, *workers]] == [False] * (WORKERS + 1)


@pytest.mark.parametrize(("raised", "status"), [
    (SystemExit(0), 0), (SystemExit(None), 0), (SystemExit(3), 3), (SystemExit(-1), 255),
    (SystemExit("bye"), 1), (RuntimeError("boom"), 1)])
def test_a_leaving_worker_keeps_its_exit_status(raised, status):
    """gunicorn's master halts on a worker's boot error (3) or app load error (4): the status
    must survive the os._exit that skips onnxruntime's destructors."""
    pid = os.fork()
    if pid == 0:
        try:
            try:
                raise raised
            finally:
                encoder_preload.leave(fork_of_preloaded=True)
        except BaseException:
            os._exit(99)  # leave() did not leave
    _, waited = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(waited) == status


def test_it_leaves_a_process_that_did_not_preload_to_exit_as_usual(monkeypatch):
    monkeypatch.setattr(encoder_preload, "_preloaded", False)
    try:
        raise SystemExit(0)
    except SystemExit:
        assert encoder_preload.leave() is None  # returned: this process never preloaded


def test_a_failed_load_is_logged_not_raised(monkeypatch, caplog):
    def broken():
        raise OSError("model.zip: unreadable")

    monkeypatch.setattr(encoder_preload.encoder, "load", broken)
    with caplog.at_level(logging.ERROR, logger="memory_console.encoder_preload"):
        assert encoder_preload.preload() is False
    assert "could not preload the encoder" in caplog.text and "unreadable" in caplog.text


def test_it_loads_nothing_without_the_weights_or_when_off(monkeypatch):
    monkeypatch.setattr(encoder_preload, "_preloaded", False)  # put back after the load below
    calls = []
    monkeypatch.setattr(encoder_preload.encoder, "load", lambda: calls.append("load"))
    monkeypatch.setattr(encoder_preload.encoder, "model_available", lambda: False)
    assert encoder_preload.preload() is False
    monkeypatch.setattr(encoder_preload.encoder, "model_available", lambda: True)
    monkeypatch.setenv("WEB_PRELOAD_ENCODER", "off")
    assert encoder_preload.preload() is False
    assert calls == []
    monkeypatch.setenv("WEB_PRELOAD_ENCODER", "1")
    assert encoder_preload.preload() is True and calls == ["load"]


def test_a_bad_switch_value_stops_the_start(monkeypatch):
    monkeypatch.setenv("WEB_PRELOAD_ENCODER", "sometimes")
    with pytest.raises(ImproperlyConfigured, match="WEB_PRELOAD_ENCODER"):
        encoder_preload.preload()
