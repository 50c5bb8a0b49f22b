"""The worker's duty for semantic rescoring: the encoder loaded once, in the worker itself.

RQ runs each job in a process forked for it (the work horse), so a model that a job loads is
gone when the job ends: every periodic embedding run (``operations.jobs.periodic_embed_job``,
every ``MEMORY_EMBED_EVERY_SECONDS`` while memories arrive) paid seconds of CPU (the
weights, then the ONNX Runtime session) before it encoded anything. Loaded by the worker
before its first fork, the work horses inherit both, copy-on-write, and encode at once. The
session runs one intra-op thread, no inter-op pool and no spinning
(``search.semantic.encoder``): a run needs no thread that the fork lost. (Importing
onnxruntime starts one background thread, whose loss makes a forked process's normal exit
abort or hang in onnxruntime's static destructors; a work horse leaves through ``os._exit``,
as the gunicorn workers do: ``memory_console.encoder_preload``.) The cost
is the model's resident memory in the worker for as long as it runs, so it is
loaded only where embeddings are computed: the weights installed and
``MEMORY_EMBED_EVERY_SECONDS`` above 0.
"""

import logging

from rq import Worker

from search import embeddings
from search.semantic import encoder

log = logging.getLogger(__name__)


class EncoderPreloadingWorker(Worker):
    def work(self, *args, **kwargs):
        if embeddings.every_seconds():
            try:
                encoder.load()
            except Exception:  # noqa: BLE001 - each job then loads it as before
                log.exception("could not preload the encoder")
        return super().work(*args, **kwargs)
