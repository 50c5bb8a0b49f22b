"""gunicorn settings of the web process: ``gunicorn -c python:memory_console.gunicorn_conf``.

Threads serve requests while others wait on Redis or the database; processes spread the
Python work over the cores, one GIL each. On 2 cores, ``bench/load.py`` at 200 requests/s
gave 3 processes of 3 threads (2 x cores - 1) a lower recall p99 than 2 x 4 (more threads
queue behind one GIL) or 6 x 2 (more processes queue for SQLite's write lock).
``WEB_CONCURRENCY`` (processes), ``WEB_THREADS`` and ``WEB_KEEPALIVE`` (seconds) override the
defaults.

The master loads the sentence encoder of semantic rescoring before it forks the workers,
which share it (``memory_console.encoder_preload``; ``WEB_PRELOAD_ENCODER=0``: each worker
loads it on its first rescoring recall); its workers then leave through ``os._exit``
(``worker_exit``).

Each worker loads the URLconf (the API, the MCP SDK, the pages) before it serves
(``post_worker_init``, ``memory_console.worker_warm``): its first request used to pay the
imports' CPU.

Its worker class (``memory_console.gunicorn_worker``) is gthread answering a request line or
headers over gunicorn's limits with the API's JSON error (414, 431), not an HTML page; the
request line may be 8,190 bytes long (gunicorn's most; its default is 4,094).

Traces (``OTEL_TRACES_EXPORTER``): each worker sets them up when it loads
``memory_console.wsgi``, after the fork (the exporter's thread is the worker's own); the
master, which loads no Django, has none.

Metrics: every process writes its values to prometheus-client's multiprocess files in
``PROMETHEUS_MULTIPROC_DIR`` (default ``var/metrics/web``; this server's own: emptied when
gunicorn starts), and ``/metrics`` adds them up (``integrations/metrics/exposition.py``).
"""

import os
from pathlib import Path

from integrations.metrics import multiproc
from memory_console import encoder_preload
from memory_console.gunicorn_worker import REQUEST_LINE_MAX

# Set here, in the master, so every worker's prometheus-client sees it when first imported.
METRICS_DIR = multiproc.use_dir(str(Path(__file__).resolve().parent.parent / "var" / "metrics"
                                    / "web"))

workers = int(os.environ.get("WEB_CONCURRENCY") or 2 * (os.cpu_count() or 1) - 1)
threads = int(os.environ.get("WEB_THREADS") or 3)
worker_class = "memory_console.gunicorn_worker.ThreadWorker"  # gthread, JSON refusals
limit_request_line = REQUEST_LINE_MAX
# No control socket (gunicornc): its path is one per machine user, so a second server (another
# checkout, a test's) would take it over, and nothing here uses it.
control_socket_disable = True

# Idle keep-alive connections stay open this long (gunicorn's default is 2 s). A client
# that reuses one just as the server closes it gets a dropped request; a proxy in front
# should time out first (nginx's upstream keepalive_timeout is 60 s).
keepalive = int(os.environ.get("WEB_KEEPALIVE") or 75)


def on_starting(server):
    multiproc.prepare_dir(METRICS_DIR)
    # Before the port is bound: a client that connects is served by a worker that has it.
    encoder_preload.preload(server.log)


def post_worker_init(worker):
    # In the worker, once it has loaded the application: imported here, not at the top, so
    # the master stays free of Django and a HUP's workers warm with the current code.
    from memory_console import worker_warm

    worker_warm.warm(worker.log)


def worker_exit(server, worker):
    # A worker of a master that preloaded skips onnxruntime's static destructors, which hang
    # or abort in a forked process (memory_console.encoder_preload).
    encoder_preload.leave()


def child_exit(server, worker):
    multiproc.process_ended(worker.pid)
