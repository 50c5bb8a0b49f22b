"""Every new console page renders (banner, no 500) with the hot store really unreachable:
``REDIS_URL`` points at a loopback port nobody listens on, as tests/test_redis_down.py does."""

import socket

import pytest

from memories import services, store
from sessions.services import session_append, session_create
from tests.views.conftest import HX, ids, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_down(settings):
    """Call it to take the hot store away; the live URL comes back after the test."""
    live = settings.REDIS_URL

    def down():
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]  # closed again: connection refused
        store._client.cache_clear()
        settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
        assert not store.redis_available()

    yield down
    store._client.cache_clear()
    settings.REDIS_URL = live


def test_the_new_pages_render_with_the_banner(admin_role_client, editor, make_memory, redis_down):
    m = make_memory("before the outage", type="working")
    services.memory_update(memory_id=m.memory_id, actor=editor, importance=0.9)
    session_create(user_id="u-a", session_id="s-1")
    session_append(session_id="s-1", messages=[{"role": "user", "content": "hello"}])
    redis_down()
    admin_role_client.raise_request_exception = False
    for path in (
        "/index/",
        "/index/policy/?user_id=u-a",
        "/activity/",
        "/tokens/",
        "/search/synonyms/",
        f"/memories/{m.memory_id}/diff/?a=1&b=2",
        f"/memories/{m.memory_id}/purge/",
        "/sessions/",
        "/sessions/s-1/",
    ):
        resp = admin_role_client.get(path)
        assert resp.status_code == 200, (path, resp.status_code)
        assert "redis-banner" in ids(resp.content), path
    assert "Redis is unreachable, so the index cannot be inspected" in text(
        admin_role_client.get("/index/")
    )
    assert ">unknown</span>" in text(admin_role_client.get("/sessions/"))
    warm = admin_role_client.post("/sessions/s-1/warm/", headers=HX)
    assert warm.status_code == 503 and "Redis is unreachable" in text(warm)
    # A database-only action still works (the index catches up through reconcile).
    promoted = admin_role_client.post(f"/memories/{m.memory_id}/promote/")
    assert promoted.status_code == 302
