"""The RQ worker the product runs (``RQ["WORKER_CLASS"]`` in settings): RQ's own worker with
each capability's duty mixed in: the periodic jobs kept scheduled
(``operations.worker.PeriodicSeedingWorker``) and every job timed for /metrics
(``integrations.metrics.worker.MeteredWorker``)."""

from integrations.metrics.worker import MeteredWorker
from operations.worker import PeriodicSeedingWorker


class ProductWorker(PeriodicSeedingWorker, MeteredWorker):
    pass
