"""Promoting a message updates the session page's side panel at once (issue 14)."""

import pytest

from sessions.services import session_append, session_create
from tests.views.conftest import HX, tags, text

pytestmark = pytest.mark.django_db


def test_a_promote_answer_carries_the_side_panel_out_of_band(editor_client):
    session_create(user_id="u-a", session_id="s-side")
    session_append(session_id="s-side", messages=[
        {"role": "user", "content": "My badge number is 44-1907"}])
    before = text(editor_client.get("/sessions/s-side/"))
    assert "session-memories" in before and "44-1907" not in before.split("session-memories")[1]
    resp = editor_client.post("/sessions/s-side/messages/1/promote/", {}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    panel = [a for t, a in tags(body) if a.get("id") == "session-memories"]
    assert panel and panel[0].get("hx-swap-oob") == "true"
    assert "My badge number is 44-1907" in body.split('id="session-memories"')[1]
