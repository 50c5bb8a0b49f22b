"""The RQ worker class that traces: sets tracing up in the worker's process
(``integrations.tracing.setup``) and runs each job in a span ``job <function>`` in the work
horse, whose spans are exported before the horse leaves (it exits through ``os._exit``,
which skips the SDK's exit hook). With tracing off it only runs the job."""

from rq import Worker

from integrations.tracing import setup
from memories import tracing


class TracedWorker(Worker):
    def __init__(self, *args, **kwargs):
        setup.setup()
        super().__init__(*args, **kwargs)

    def perform_job(self, job, queue):
        if not tracing.enabled():
            return super().perform_job(job, queue)
        name = (job.func_name or "unknown").rsplit(".", 1)[-1]
        try:
            with tracing.span(f"job {name}", {"messaging.system": "rq",
                                              "messaging.message.id": job.id,
                                              "messaging.destination.name": queue.name}):
                return super().perform_job(job, queue)
        finally:
            setup.flush()
