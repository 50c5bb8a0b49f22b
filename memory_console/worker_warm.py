"""What a web worker's first request would load, loaded before the worker serves.

gunicorn's worker sets Django up when it boots (``memory_console.wsgi``: settings, apps,
models, middleware), but Django imports the URLconf on the first request that resolves a
URL, and with it everything the URLconf names: the official MCP SDK behind ``/mcp`` (its
server and client modules and a few hundred pydantic models, most of the cost), the
django-ninja API with its routers and schemas, the admin, django-rq's views and the pages.
The first request of every worker after each start or HUP paid for it (docs/benchmarks.md,
encoder_preload, ``--compare warm``). :func:`warm` runs in each worker from
gunicorn's ``post_worker_init`` (``memory_console.gunicorn_conf``), after the application
is loaded and before the worker accepts a connection.

Only what every request of any tenant shares is loaded: the URLconf, its reverse index
(``{% url %}`` on every page) and the stemmer module of the analyzers. Nothing is rendered,
no database or Redis connection is opened (Django's connections are per thread, the request
threads would not use one opened here, and a warm-up must not wait on a server that is down),
and no serving index is built (they are per namespace and budgeted: the first recall of a
namespace builds its own). This runs in the worker only: the master stays free of Django, so
a HUP starts workers on the current settings and code.

Not in ``AppConfig.ready``: every process that sets Django up (management commands, the job
worker, tests) would pay for a URLconf it never resolves.

A step that fails is logged and skipped: the first request then loads what it needs, as
without the warm-up.
"""

import logging
import time

_log = logging.getLogger(__name__)


def _urlconf() -> None:
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - the property imports ROOT_URLCONF


def _url_names() -> None:
    from django.urls import reverse

    reverse("healthz")  # the first reverse() builds the resolver's index of every name


def _stemmer() -> None:
    from search.analysis import tokenizer

    tokenizer.stem("memories")  # imports snowballstemmer (all its languages' modules)


STEPS = (("URLconf", _urlconf), ("URL names", _url_names), ("stemmer", _stemmer))


def warm(log=_log) -> list[str]:
    """Run every step of :data:`STEPS`; returns the names of those that succeeded. ``log``:
    a ``logging.Logger`` or gunicorn's (``worker.log``). Never raises: a failed step is
    logged with its traceback."""
    started, cpu = time.perf_counter(), time.process_time()
    done = []
    for name, step in STEPS:
        try:
            step()
        except Exception:  # noqa: BLE001 - the first request loads it instead
            log.exception("could not warm the %s: the worker's first request loads it", name)
        else:
            done.append(name)
    log.info("worker warmed (%s) in %.2f s, %.2f s of CPU", ", ".join(done) or "nothing",
             time.perf_counter() - started, time.process_time() - cpu)
    return done
