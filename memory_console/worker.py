"""The RQ worker the product runs (``RQ["WORKER_CLASS"]`` in settings): RQ's own worker with
each capability's duty mixed in: the periodic jobs kept scheduled
(``operations.worker.PeriodicSeedingWorker``), every job timed for /metrics
(``integrations.metrics.worker.MeteredWorker``) and the encoder loaded once before the
work horses fork (``search.worker.EncoderPreloadingWorker``)."""

from integrations.metrics.worker import MeteredWorker
from operations.worker import PeriodicSeedingWorker
from search.worker import EncoderPreloadingWorker


class ProductWorker(PeriodicSeedingWorker, MeteredWorker, EncoderPreloadingWorker):
    pass
