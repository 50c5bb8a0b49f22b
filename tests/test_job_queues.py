"""The job queues by logical name (memories/queue.py): production keeps RQ's queues
``default`` and ``index``; a test run's carry its key prefix, so two runs (two xdist workers,
two checkouts) sharing a Redis database never take each other's jobs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from memories import queue as job_queue

REPO = Path(__file__).resolve().parent.parent


def test_production_keeps_the_queue_names_default_and_index():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DJANGO_", "PYTEST", "MEMORY_QUEUE_PREFIX", "MEMORY_KEY_PREFIX"))}
    env["DJANGO_SETTINGS_MODULE"] = "memory_console.settings"
    out = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings as s; "
         "print(sorted(s.RQ_QUEUES), s.JOB_QUEUES['index'], s.MEMORY_KEY_PREFIX)"],
        cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['default', 'index'] index mc"


def test_a_test_run_names_its_queues_after_its_key_prefix():
    prefix = settings.MEMORY_KEY_PREFIX
    assert job_queue.queue_name("index") == f"{prefix}-index"
    assert job_queue.queue_names() == [f"{prefix}-default", f"{prefix}-index"]
    assert set(settings.RQ_QUEUES) == set(job_queue.queue_names())
    assert job_queue.logical_name(f"{prefix}-default") == "default"
    assert job_queue.get_queue("default").name == f"{prefix}-default"
    with pytest.raises(KeyError):
        job_queue.queue_name("elsewhere")


@pytest.mark.django_db(transaction=True)
def test_a_job_goes_to_the_mapped_queue_and_the_jobworker_command_runs_it(empty_queues):
    job_id = job_queue.enqueue("time.sleep", 0, queue="default")
    queue = job_queue.get_queue("default")
    assert queue.job_ids == [job_id]
    queue.empty()  # its callbacks read the database: a plain job for the worker below
    job_id = queue.enqueue("time.sleep", 0).id
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update({"DJANGO_SETTINGS_MODULE": "memory_console.settings_test",
                "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX,
                "REDIS_URL": settings.REDIS_URL,
                "RQ_REDIS_URL": settings.RQ_QUEUES[job_queue.queue_name("index")]["URL"]})
    subprocess.run([sys.executable, "manage.py", "jobworker", "default", "--burst"], cwd=REPO,
                   env=env, capture_output=True, check=True, timeout=120)
    assert queue.count == 0
    assert queue.fetch_job(job_id).get_status(refresh=True) == "finished"
