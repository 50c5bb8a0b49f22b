"""gunicorn settings of the web process: ``gunicorn -c python:memory_console.gunicorn_conf``.

Threads serve requests while others wait on Redis or the database; processes spread the
Python work over the cores, one GIL each. On 2 cores, ``bench/load.py`` at 200 requests/s
gave 3 processes of 3 threads (2 x cores - 1) a lower recall p99 than 2 x 4 (more threads
queue behind one GIL) or 6 x 2 (more processes queue for SQLite's write lock).
``WEB_CONCURRENCY`` (processes), ``WEB_THREADS`` and ``WEB_KEEPALIVE`` (seconds) override the
defaults.
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY") or 2 * (os.cpu_count() or 1) - 1)
threads = int(os.environ.get("WEB_THREADS") or 3)
worker_class = "gthread"

# Idle keep-alive connections stay open this long (gunicorn's default is 2 s). A client
# that reuses one just as the server closes it gets a dropped request; a proxy in front
# should time out first (nginx's upstream keepalive_timeout is 60 s).
keepalive = int(os.environ.get("WEB_KEEPALIVE") or 75)
