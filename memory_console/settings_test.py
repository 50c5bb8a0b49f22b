"""Settings for the test suite: the real settings, a DEBUG default and a Redis key prefix
of this run's own, so concurrent runs never share the hot store or the index (tests/conftest.py
cleans it). The run's job queues carry the same prefix (``mctest-…-index``), so concurrent
runs sharing a Redis database never take each other's jobs either. Under pytest-xdist each
worker process is a run of its own: the prefix names the worker (``mctest-…-gw0``)."""

import os
import uuid

os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("REDIS_URL", os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/9"))
os.environ.setdefault("MEMORY_KEY_PREFIX", f"mctest-{uuid.uuid4().hex[:10]}")
# The run's prefix, before any xdist worker's name: the test database is named after it
# (pytest-django adds the worker's suffix to that name itself).
_RUN_PREFIX = os.environ["MEMORY_KEY_PREFIX"]
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER:
    # The xdist controller loaded these settings first and every worker inherited its
    # prefix: each worker takes one of its own. Processes a worker starts inherit the
    # worker's prefix (already suffixed) and keep it.
    _RUN_PREFIX = _RUN_PREFIX.removesuffix(f"-{_WORKER}")
    os.environ["MEMORY_KEY_PREFIX"] = f"{_RUN_PREFIX}-{_WORKER}"
# Always the key prefix (never an inherited one): a worker's queues are its own.
os.environ["MEMORY_QUEUE_PREFIX"] = os.environ["MEMORY_KEY_PREFIX"] + "-"
# No periodic embedding job unless a test asks for it: a real worker started by a test would
# otherwise encode every memory the test wrote (minutes for thousands of them on a loaded
# machine). Tests of semantic rescoring call ``search.embeddings.embed_pending`` themselves;
# the schedule is tested with the setting turned on (tests/test_integrity_jobs.py).
os.environ.setdefault("MEMORY_EMBED_EVERY_SECONDS", "0")
# No periodic snapshot refresh unless a test asks for it (tests call the job themselves).
os.environ.setdefault("MEMORY_SERVING_SNAPSHOT_EVERY_SECONDS", "0")

from memory_console.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test logins

if not DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # One test database per run, so concurrent PostgreSQL runs never drop each other's
    # (pytest-django appends an xdist worker's name: test_mctest_…_gw0).
    DATABASES["default"]["TEST"] = {"NAME": "test_" + _RUN_PREFIX.replace("-", "_")}  # noqa: F405
else:
    # A file (not shared-cache memory) so threads and the live server see one database and
    # wait on its lock instead of failing; one file per run (and per xdist worker: pytest-django
    # appends its name) so concurrent runs never meet.
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": str(BASE_DIR / "var" / f"test-{_RUN_PREFIX}.sqlite3")  # noqa: F405
    }
