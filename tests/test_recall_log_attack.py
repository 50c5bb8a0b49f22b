"""The recall log under attack: a token restricted to agents reads only its agents' traces
(and its own recalls, not its user's other tokens'), a buffered trace of the wrong shape
never stops the log, and odd input is a 400, never a 5xx."""

import json

import pytest

from accounts.tokens import token_create
from recalls.models import Recall
from tests.conftest import ApiClient
from tests.helpers import create

pytestmark = pytest.mark.django_db


def _recall(api, query, user_id="u-a", **body):
    resp = api.client.post("/api/v1/recall", data=json.dumps(
        {"user_id": user_id, "query": query, **body}), content_type="application/json",
        headers=api._headers())
    assert resp.status_code == 200, resp.content
    return resp.json()


def _token(user, **restriction) -> ApiClient:
    client = ApiClient(None)
    client.token = token_create(user=user, **restriction)
    return client


def test_an_agent_token_does_not_read_its_users_other_recalls(api, editor):
    secret = create("The keeper's safe code is 1234", agent_id="keeper")
    create("The planner books trains", agent_id="planner")
    unnamed = _recall(api, "safe code")["recall_id"]  # the user's unrestricted token
    named = _recall(api, "safe code", agent_id="keeper")["recall_id"]
    planner = _token(editor, agents=["planner"])  # the same user, another token
    for rid in (unnamed, named):
        assert planner.get(f"/recalls/{rid}").status_code == 404
        assert planner.post(f"/recalls/{rid}/feedback", {
            "memory_id": secret.memory_id, "grade": 3}).status_code == 404
    listed = planner.get("/recalls?user_id=u-a").json()["recalls"]
    assert secret.memory_id not in json.dumps(listed)
    own = _recall(planner, "trains")["recall_id"]
    assert planner.get(f"/recalls/{own}").status_code == 200
    assert [r["id"] for r in planner.get("/recalls?user_id=u-a").json()["recalls"]] == [own]


def test_an_agent_token_does_not_read_its_users_console_recalls(editor, client):
    create("The keeper's safe code is 1234", agent_id="keeper")
    client.force_login(editor)
    assert client.get("/search/", {"user_id": "u-a", "q": "safe code"}).status_code == 200
    planner = _token(editor, agents=["planner"])
    assert planner.get("/recalls?user_id=u-a").json()["recalls"] == []
    rid = Recall.objects.get().recall_id  # written by the read above
    assert planner.get(f"/recalls/{rid}").status_code == 404
