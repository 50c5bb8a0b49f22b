"""The sentence encoder loaded in the gunicorn master, before it forks the web workers.

The default profile (``context``) rescores semantically, and each web worker loaded the
encoder (``search.semantic.encoder``: weights and ONNX Runtime session, hundreds of MB
resident, seconds of CPU) on its first rescoring recall: after every start that recall took seconds
in each of the 3 workers, and each held a copy of its own. Loaded once in the master
(``memory_console.gunicorn_conf``'s ``on_starting``, before the port is bound), the workers
inherit it copy-on-write and answer the first rescoring recall at once; a worker that
gunicorn replaces later (a crash, a timeout) inherits it too. Nothing writes to the weights
or the session's packed copy of them, so their pages stay shared (docs/benchmarks.md,
encoder_preload: Pss per worker). As in the job worker (``search.worker``), the session runs one
intra-op thread, no inter-op pool and no spinning, so a run needs no thread of the master's;
the query-encoding threads (``search.embeddings.query_vector_soon``) are started by each
worker, after the fork.

One thread is lost all the same: importing onnxruntime (1.32) starts a background thread
that waits on a condition variable, and a forked process that leaves through ``exit()``
runs onnxruntime's static destructors, which wait for that thread's waiters (the worker
hangs until gunicorn kills it) or abort (SIGABRT). So a worker of a master that preloaded
leaves through :func:`leave` (gunicorn's ``worker_exit``): Python's own exit work, then
``os._exit`` with the worker's exit status, as an RQ work horse does.

Loaded wherever recall can rescore: the weights are installed. Which profiles rescore is no
fact of the start: the shipped default does (``w_semantic`` 0.4), a PATCH turns any
profile's ``w_semantic`` up while the server runs, and the lab's sliders search an unsaved
profile with any ``w_semantic``; reading the saved profiles would also take Django and a
database connection into the master before it forks. ``WEB_PRELOAD_ENCODER=0`` turns it
off (a deployment that never rescores saves the master's copy; each worker then loads the
encoder on its first rescoring recall, as before).

The master loads no Django settings, apps or connections (only ``ImproperlyConfigured`` for
a bad ``WEB_PRELOAD_ENCODER``): the workers set Django up themselves, and a HUP still
starts workers on the current code, except the encoder's modules, which the master holds
(a change to them takes a restart, as with gunicorn's ``preload_app``).
"""

import atexit
import logging
import os
import sys
import time

from memory_console.env import env_bool
from search.semantic import encoder

_log = logging.getLogger(__name__)
# Set by preload() in the master; its forked workers inherit it.
_preloaded = False


def enabled() -> bool:
    """``WEB_PRELOAD_ENCODER`` (1/0/true/false, default 1); ImproperlyConfigured otherwise."""
    return env_bool("WEB_PRELOAD_ENCODER", True)


def preload(log=_log) -> bool:
    """Load the encoder into this process when :func:`enabled` and the weights are
    installed; returns whether it holds the encoder now. ``log``: a ``logging.Logger`` or
    gunicorn's (``server.log``). A failure to load is logged, never raised: the workers then
    load it on their first rescoring recall, as without the preload."""
    global _preloaded
    if not enabled() or not encoder.model_available():
        return False
    started = time.perf_counter()
    try:
        encoder.load()
    except Exception:  # noqa: BLE001 - the workers load it lazily instead
        log.exception("could not preload the encoder: each worker loads it on its first "
                      "rescoring recall")
        return False
    _preloaded = True
    log.info("encoder loaded in %.1f s (%s) before the workers fork",
             time.perf_counter() - started, encoder.backend())
    return True


def leave(fork_of_preloaded=None) -> None:
    """In a worker forked from a master that preloaded (``fork_of_preloaded``: default, this
    process's inherited mark), leave now: the atexit functions, the logs and standard streams
    flushed, then ``os._exit`` with the status of the ``SystemExit`` (or other exception)
    being raised, so onnxruntime's static destructors never run (module docstring). Called
    from gunicorn's ``worker_exit``, inside the ``finally`` around the worker's run, where
    that exception is the one being handled. Returns (does nothing) anywhere else."""
    if not (_preloaded if fork_of_preloaded is None else fork_of_preloaded):
        return
    status = _exit_status(sys.exc_info()[1])
    try:
        atexit._run_exitfuncs()  # noqa: SLF001 - what interpreter shutdown would run
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def _exit_status(exc: BaseException | None) -> int:
    """The status the interpreter would exit with for ``exc`` (None: 0)."""
    if exc is None:
        return 0
    if isinstance(exc, SystemExit):
        code = exc.code
        if code is None:
            return 0
        return code & 0xFF if isinstance(code, int) else 1
    return 1
