"""A throw-away ``redis-server`` of a test's own, on a spare loopback port: for faults that
would disturb the shared test Redis (CLIENT PAUSE, maxmemory, MONITOR, a flush).

Only the hot store moves there (``REDIS_URL``); the job queues stay on the test Redis.
"""

import contextlib
import shutil
import socket
import subprocess
import time

import redis


def spare_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def redis_server(tmp_path, *extra: str, port: int | None = None):
    """Start ``redis-server`` (no persistence; on ``port``, else a spare one) and yield
    ``(url, client)``; stopped after."""
    binary = shutil.which("redis-server")
    if binary is None:
        import pytest

        pytest.skip("redis-server is not installed")
    port = port or spare_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "no", "--dir", str(tmp_path), "--protected-mode", "yes", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, decode_responses=True)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            raise RuntimeError("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0", client
    finally:
        proc.kill()
        proc.wait(timeout=10)


@contextlib.contextmanager
def hot_store_at(settings, url: str):
    """Point the hot store (``REDIS_URL``) at ``url`` for the block, with fresh clients."""
    import os

    store = _store_module()
    live, cluster = settings.REDIS_URL, os.environ.get("REDIS_CLUSTER")
    store._client.cache_clear()
    _clear_scripts()
    settings.REDIS_URL = url
    os.environ["REDIS_CLUSTER"] = ""  # the server of our own is a standalone one
    try:
        yield
    finally:
        store._client.cache_clear()
        _clear_scripts()
        settings.REDIS_URL = live
        if cluster is None:
            os.environ.pop("REDIS_CLUSTER", None)
        else:
            os.environ["REDIS_CLUSTER"] = cluster


def _store_module():
    import importlib

    for name in ("memories.store", "memories.hot_store", "memories.redis_store"):
        with contextlib.suppress(ImportError):
            module = importlib.import_module(name)
            if hasattr(module, "_client"):
                return module
    raise ImportError("no hot-store module with a cached _client")


def _clear_scripts() -> None:
    """Lua script objects are cached per process with the client that made them."""
    import importlib

    for name in ("memories.index.postings", "search.index.postings"):
        with contextlib.suppress(ImportError):
            module = importlib.import_module(name)
            script = getattr(module, "_script", None)
            if script is not None and hasattr(script, "cache_clear"):
                script.cache_clear()


def fill_up(client) -> None:
    """Make the server refuse writes: ``maxmemory`` far under what it uses (what it uses
    moves with client buffers, so "just under" would let some writes in), noeviction."""
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    try:
        client.set("probe-full", "x" * 4096)
    except redis.exceptions.OutOfMemoryError:
        return
    raise AssertionError("the server still takes writes")


def make_room(client) -> None:
    client.config_set("maxmemory", 0)
