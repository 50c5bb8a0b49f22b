"""Fixtures: a real Redis (this run's own key prefix, cleaned after every test), the real
database, personas with each role, and an API client with a bearer token."""

import contextlib
import json
import logging

import django_rq
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client
from rq.exceptions import NoSuchJobError

from accounts.tokens import token_create
from memories import generation_cache, store
from memories import queue as job_queue
from memories.migrations import _builtins
from search.serving import feed as serving_feed
from tests.browser import chromium, console  # noqa: F401  (the browser tests' fixtures)


def _prefix_keys(client):
    return list(client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*", count=1000))


@pytest.fixture(scope="session", autouse=True)
def _redis_guard():
    """Refuse a Redis database that holds data of something other than test runs."""
    client = store.get_client()
    try:
        client.ping()
    except store.RedisError as exc:
        pytest.exit(f"tests need a real Redis at {settings.REDIS_URL}: {exc}", returncode=3)
    foreign = [k for k in client.scan_iter(count=1000, _type=None)
               if not store.text(k).startswith(("mctest-", "rq:"))][:3]
    if foreign:
        pytest.exit(f"refusing {settings.REDIS_URL}: it holds foreign keys such as {foreign}",
                    returncode=3)
    yield
    keys = _prefix_keys(client)
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def _clean_redis():
    """Every test starts and ends with no key under this run's prefix, and with an empty
    row cache and no serving index: each test is a fresh deployment, whose rows (profiles,
    tokens) and indexes are new (a stream recreated under an index is tested on its own)."""
    client = store.get_client()
    generation_cache.clear()
    serving_feed.clear()
    yield
    keys = _prefix_keys(client)
    if keys:
        client.delete(*keys)


def _only_the_tests_blocks(connection) -> bool:
    """Whether the open atomic blocks are only the test case's own transaction: for the code
    under test, the connection is then in autocommit."""
    return connection.in_atomic_block and all(
        block._from_testcase for block in connection.atomic_blocks)


def _run_callback(func, robust):
    """Run an on-commit callback as Django does: a robust one's error is logged, not raised."""
    if not robust:
        func()
        return
    try:
        func()
    except Exception as exc:
        logging.getLogger("django.db.backends.base").error(
            "Error calling %s in on_commit() (%s).", func.__qualname__, exc, exc_info=True)


@pytest.fixture(autouse=True)
def _on_commit_as_if_committed(request, monkeypatch):
    """A test in a transaction (``django_db`` without ``transaction=True``) sees what a commit
    does: ``transaction.on_commit`` callbacks (the Redis mirror, job enqueues) run when the
    code under test leaves its outermost ``atomic`` block, and at once outside any, as they
    would in production. The test's own transaction is rolled back afterwards, which is much
    cheaper than flushing every table. Tests that need a real commit (another thread or
    process reads the rows) keep ``transaction=True``; there is no test case transaction
    there and this changes nothing. A test asking for ``django_capture_on_commit_callbacks``
    captures the callbacks itself."""
    if "django_capture_on_commit_callbacks" in request.fixturenames:
        return
    on_commit = BaseDatabaseWrapper.on_commit
    atomic_exit = transaction.Atomic.__exit__

    def on_commit_now(connection, func, robust=False):
        if _only_the_tests_blocks(connection):
            _run_callback(func, robust)
        else:
            on_commit(connection, func, robust)

    def exit_and_run_callbacks(block, exc_type, exc_value, traceback):
        atomic_exit(block, exc_type, exc_value, traceback)
        connection = transaction.get_connection(block.using)
        if (not block._from_testcase and exc_type is None and not connection.needs_rollback
                and _only_the_tests_blocks(connection)):
            pending, connection.run_on_commit = connection.run_on_commit, []
            for _savepoints, func, robust in pending:
                _run_callback(func, robust)

    monkeypatch.setattr(BaseDatabaseWrapper, "on_commit", on_commit_now)
    monkeypatch.setattr(transaction.Atomic, "__exit__", exit_and_run_callbacks)


@pytest.fixture
def empty_queues():
    """The job queues empty before and after the test, scheduled jobs too (jobs of another
    test never run)."""
    def empty():
        for name in job_queue.LOGICAL:
            queue = job_queue.get_queue(name)
            queue.empty()
            # A periodic job another test scheduled must not come due in this one.
            for job_id in queue.scheduled_job_registry.get_job_ids():
                # A killed worker may leave an entry whose job is already gone.
                with contextlib.suppress(NoSuchJobError):
                    queue.scheduled_job_registry.remove(job_id, delete_job=True)

    empty()
    yield
    empty()


def work():
    """Run every queued job in a burst worker on the real Redis. The jobs run in a forked
    work horse, which must find the test's rows committed: a test in a transaction fails."""
    assert not transaction.get_connection().in_atomic_block, (
        "jobs run in a forked work horse: mark the test django_db(transaction=True)")
    django_rq.get_worker(*job_queue.queue_names()).work(burst=True)


@pytest.fixture
def redis_client():
    return store.get_client()


@pytest.fixture
def builtins(db):
    """Built-in profiles and role groups (a transactional test flushes migration data)."""
    _builtins.ensure()


def _persona(username, role):
    user = User.objects.create_user(username=username, password="pw-" + username)
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def viewer(builtins):
    return _persona("vera", "viewer")


@pytest.fixture
def editor(builtins):
    return _persona("eddie", "editor")


@pytest.fixture
def admin_user(builtins):
    return _persona("ada", "admin")


class ApiClient:
    """Django test client speaking JSON with a bearer token: a new token of ``user`` made with
    ``token_args`` (``name``, ``namespaces``, ``agents``...), or none for ``user`` None."""

    def __init__(self, user, **token_args):
        self.client = Client()
        self.token = token_create(user=user, **token_args) if user else ""

    def _headers(self):
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def call(self, method, path, body=None, headers=None, **kwargs):
        data = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
        return getattr(self.client, method)(
            "/api/v1" + path, data=data, content_type="application/json",
            headers={**self._headers(), **(headers or {})}, **kwargs)

    def get(self, path, **kw):
        return self.call("get", path, **kw)

    def post(self, path, body=None, headers=None):
        return self.call("post", path, body, headers=headers)

    def patch(self, path, body=None):
        return self.call("patch", path, body)

    def delete(self, path):
        return self.call("delete", path)


def login(user) -> Client:
    """A console client logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer_client(viewer):
    return login(viewer)


@pytest.fixture
def editor_client(editor):
    return login(editor)


@pytest.fixture
def admin_role_client(admin_user):
    return login(admin_user)


@pytest.fixture
def api(editor):
    return ApiClient(editor)


@pytest.fixture
def admin_api(admin_user):
    return ApiClient(admin_user)


@pytest.fixture
def viewer_api(viewer):
    return ApiClient(viewer)


def pytest_sessionfinish(session, exitstatus):
    """SQLite leaves its WAL side files (and the backend its write-lock file) when Django
    drops the test database file."""
    from pathlib import Path

    name = settings.DATABASES["default"].get("TEST", {}).get("NAME")
    if name and settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        for suffix in ("-wal", "-shm", ".writelock"):
            Path(str(name) + suffix).unlink(missing_ok=True)
