"""The RQ worker the product runs (``RQ["WORKER_CLASS"]`` in settings): RQ's own worker with
each capability's duty mixed in: Redis outages waited out instead of quitting
(``memory_console.worker_outage.OutageSurvivingWorker``, outermost, so it guards the other
duties too), the periodic jobs kept scheduled
(``operations.worker.PeriodicSeedingWorker``), every job timed for /metrics
(``integrations.metrics.worker.MeteredWorker``), the encoder loaded once before the
work horses fork (``search.worker.EncoderPreloadingWorker``) and each job traced when an
exporter is configured (``integrations.tracing.worker.TracedWorker``)."""

from integrations.metrics.worker import MeteredWorker
from integrations.tracing.worker import TracedWorker
from memory_console.worker_outage import OutageSurvivingWorker
from operations.worker import PeriodicSeedingWorker
from search.worker import EncoderPreloadingWorker


class ProductWorker(OutageSurvivingWorker, PeriodicSeedingWorker, MeteredWorker,
                    EncoderPreloadingWorker, TracedWorker):
    pass
