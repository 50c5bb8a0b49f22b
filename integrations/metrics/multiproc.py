"""prometheus-client's multiprocess directory: prepared at start, tidied as processes end.

Imported by the gunicorn config in the master process, before Django: no Django here.
prometheus-client reads ``PROMETHEUS_MULTIPROC_DIR`` when it is first imported, so the
variable is set (``use_dir``) before any worker imports the app.
"""

import glob
import os


def use_dir(default: str) -> str:
    """Set ``PROMETHEUS_MULTIPROC_DIR`` to ``default`` unless already set; returns it."""
    return os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", default)


def prepare_dir(path: str) -> None:
    """Create ``path`` and remove the metric files a previous run left there (their
    processes are gone: stale counters would be added to the new run's)."""
    os.makedirs(path, exist_ok=True)
    for name in glob.glob(os.path.join(path, "*.db")):
        os.remove(name)


def process_ended(pid: int) -> None:
    """Drop the live-gauge files of process ``pid`` (counters and histograms stay: their
    totals must not go backwards)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)
