"""The text ``/metrics`` answers: every process's metrics, plus state read at scrape time.

Multiprocess mode (``PROMETHEUS_MULTIPROC_DIR`` set): the files of every gunicorn process,
and of the directories in ``settings.METRICS_EXTRA_DIRS`` (the RQ worker's), merged with
prometheus-client's own ``MultiProcessCollector.merge``, plus prometheus-client's
``ProcessCollector`` (``process_*``: CPU, memory, open files, start time) of the process that
answers the scrape: custom collectors cannot be merged across processes, so the figures are
that one process's. Otherwise this process's registry (which holds the process collector).
Read at scrape time, bounded in cost: ``index_pending`` (one COUNT over the memory table),
and the length of each job queue and of its failed-job registry (one Redis call each).
"""

import glob
import os

from django.conf import settings
from prometheus_client import REGISTRY, CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from rq.registry import FailedJobRegistry

from integrations.metrics.registry import NAMESPACE, count_redis_error
from memories import queue as job_queue
from memories import store
from memories.models import Memory


class _MergedFiles:
    """Collector over the multiprocess files of several directories."""

    def __init__(self, dirs: list[str]):
        self.dirs = dirs

    def collect(self):
        files = [f for d in self.dirs for f in glob.glob(os.path.join(d, "*.db"))]
        return MultiProcessCollector.merge(files, accumulate=True)


class _State:
    """Gauges read now from the database and Redis."""

    def collect(self):
        pending = GaugeMetricFamily(
            f"{NAMESPACE}_index_pending", "Memories stored while Redis was unreachable, "
            "waiting for the reconcile to index them.")
        pending.add_metric([], Memory.objects.filter(needs_resync=True).count())
        yield pending
        queued = GaugeMetricFamily(f"{NAMESPACE}_queue_jobs", "Jobs waiting in a queue.",
                                   labels=["queue"])
        failed = GaugeMetricFamily(f"{NAMESPACE}_failed_jobs", "Jobs in a queue's failed "
                                   "registry.", labels=["queue"])
        try:
            for name in job_queue.LOGICAL:
                queue = job_queue.get_queue(name)
                queued.add_metric([name], queue.count)
                failed.add_metric([name], FailedJobRegistry(queue=queue).count)
        except store.RedisError:
            count_redis_error("metrics")
            return
        yield queued
        yield failed


def multiprocess_dirs() -> list[str]:
    main = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not main:
        return []
    return [d for d in [main, *settings.METRICS_EXTRA_DIRS] if os.path.isdir(d)]


def render() -> bytes:
    """The exposition text (Prometheus text format 0.0.4)."""
    registry = CollectorRegistry()
    dirs = multiprocess_dirs()
    if dirs:
        registry.register(_MergedFiles(dirs))
        ProcessCollector(registry=registry)
    else:
        registry.register(REGISTRY)
    registry.register(_State())
    return generate_latest(registry)
