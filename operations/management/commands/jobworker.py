"""``manage.py jobworker [default] [index] [rqworker options]``: django-rq's ``rqworker`` on the
RQ queues of the logical names given (both when none is), as ``memories.queue`` maps them, so
a worker listens where the code enqueues whatever prefix the queues carry."""

from django_rq.management.commands.rqworker import Command as RQWorkerCommand

from memories import queue as job_queue


class Command(RQWorkerCommand):
    help = "Run the RQ worker on the job queues named by their logical names (default, index)."

    def handle(self, *args, **options):
        return super().handle(*job_queue.queue_names(*args), **options)
