"""Tokens restricted to namespaces: look-alike namespaces stay out of reach."""

import io

import pytest
from django.core.management import call_command

from memories import services
from sessions import services as sessions
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def scoped(admin_user):
    client = ApiClient(None)
    out = io.StringIO()
    call_command("create_api_token", "scoped-agent", "--role", "admin", "--namespace",
                 "user_1024", stdout=out)
    client.token = out.getvalue().strip().splitlines()[-1]
    return client


def test_a_restricted_token_reaches_only_its_namespaces(builtins, scoped):
    mine = services.memory_create(user_id="user_1024", content="shared words alpha")[0]
    theirs = services.memory_create(user_id="user_10240", content="shared words alpha")[0]
    sessions.session_create(user_id="user_10240", session_id="s-other")
    assert scoped.post("/recall", {"user_id": "user_1024", "query": "alpha"}).json()[
        "results"][0]["memory_id"] == mine.memory_id
    denied = scoped.post("/recall", {"user_id": "user_10240", "query": "alpha"})
    assert denied.status_code == 403 and denied.json()["error"]["field"] == "user_id"
    assert scoped.get(f"/memories/{theirs.memory_id}").status_code == 404
    assert scoped.patch(f"/memories/{theirs.memory_id}", {"content": "x"}).status_code == 404
    assert scoped.post("/memories", {"user_id": "user_10240", "content": "x"}).status_code == 403
    assert scoped.get("/sessions/s-other/context").status_code == 404
    assert scoped.post("/sessions/s-other/messages", {"role": "user", "content": "x"}).status_code == 404
    assert scoped.get("/export?user_id=user_10240").status_code == 403
    assert scoped.get("/audit").status_code == 403
    assert scoped.post("/reindex").status_code == 403
    assert scoped.post("/memories/bulk", {"memory_ids": [theirs.memory_id],
                                          "action": "forget"}).status_code == 404
    assert scoped.post("/evaluate", {"profile": "bm25", "k": 5, "queries": [
        {"user_id": "user_10240", "query": "alpha", "relevant": [theirs.memory_id]}]}).status_code == 403
    assert scoped.get(f"/memories/{mine.memory_id}").status_code == 200


def test_an_unrestricted_token_reaches_every_namespace(builtins, admin_api):
    theirs = services.memory_create(user_id="user_10240", content="words")[0]
    assert admin_api.get(f"/memories/{theirs.memory_id}").status_code == 200
    assert admin_api.get("/audit").status_code == 200
