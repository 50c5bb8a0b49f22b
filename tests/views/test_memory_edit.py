"""Editing a memory's content, tags, type and metadata on its page (issue 14)."""

import json

import pytest

from memories import services
from memories.models import Memory
from search.memory_search import memory_search
from tests.views.conftest import HX, ids, text

pytestmark = pytest.mark.django_db


def _post(client, m, headers=None, **fields):
    data = {"content": m.content, "tags": ", ".join(m.tags), "type": m.type,
            "metadata": json.dumps(m.metadata), "reason": "fix a typo", "version": m.version}
    data.update(fields)
    return client.post(f"/memories/{m.memory_id}/edit/", data, headers=headers or {})


def test_the_page_has_a_folded_edit_form_for_editors_only(editor_client, viewer_client,
                                                         make_memory):
    m = make_memory("Deploys run on Tuesdays", tags=["ops"])
    body = text(editor_client.get(f"/memories/{m.memory_id}/"))
    assert {"edit-details", "edit-form", "edit_content", "edit_metadata"} <= ids(body)
    assert f'action="/memories/{m.memory_id}/edit/"' in body  # works without JavaScript
    assert "edit-form" not in ids(text(viewer_client.get(f"/memories/{m.memory_id}/")))
    assert _post(viewer_client, m).status_code == 403


def test_an_edit_writes_a_new_version_with_a_word_diff_and_reindexes(editor_client, make_memory):
    m = make_memory("Deploys run on Tuesdays", tags=["ops"])
    resp = _post(editor_client, m, content="Deploys run on Thursdays", tags="ops, release",
                 type="working", metadata='{"ticket": "OPS-7"}')
    assert resp.status_code == 302
    m.refresh_from_db()
    assert (m.version, m.content, m.tags, m.type, m.metadata) == (
        2, "Deploys run on Thursdays", ["ops", "release"], "working", {"ticket": "OPS-7"})
    last = m.history.order_by("-history_id").first()
    assert last.history_change_reason == "fix a typo" and last.kind == "edit"
    body = text(editor_client.get(f"/memories/{m.memory_id}/"))
    assert "<del>Tuesdays</del><ins>Thursdays</ins>" in body
    found = memory_search(user_id="u-a", query="Thursdays").results
    assert [h.memory_id for h in found] == [m.memory_id]
    assert memory_search(user_id="u-a", query="Tuesdays").results == []


@pytest.mark.parametrize("fields, message", [
    ({"reason": ""}, "A reason is required"),
    ({"metadata": "{not json"}, "Not valid JSON"),
    ({"metadata": "[1, 2]"}, "must be a JSON object"),
    ({"content": ""}, "This field is required"),
    # White space passes the form (and the browser's `required`); the service refuses it.
    ({"content": "   \n  "}, "content must not be blank"),
])
def test_bad_input_is_an_inline_error_and_changes_nothing(editor_client, make_memory,
                                                         fields, message):
    m = make_memory("Deploys run on Tuesdays")
    resp = _post(editor_client, m, headers=HX, **fields)
    body = text(resp)
    assert resp.status_code == 400 and "<html" not in body and 'id="memory-panel"' in body
    assert message in body and "edit-details" in ids(body) and " open>" in body
    assert Memory.objects.get(pk=m.pk).version == 1


def test_a_service_validation_error_names_the_field(editor_client, make_memory):
    m = make_memory("Deploys run on Tuesdays")
    resp = _post(editor_client, m, headers=HX, tags="x" * 300)
    assert resp.status_code == 400 and "field-error" in text(resp)
    assert Memory.objects.get(pk=m.pk).version == 1


def test_a_stale_form_says_who_changed_it_and_shows_the_diff(editor_client, admin_user,
                                                            make_memory):
    m = make_memory("Deploys run on Tuesdays")
    stale = Memory.objects.get(pk=m.pk)
    services.memory_update(memory_id=m.memory_id, actor=admin_user,
                           content="Deploys run on Mondays", reason="schedule")
    resp = _post(editor_client, stale, headers=HX, content="Deploys run on Fridays")
    body = text(resp)
    assert resp.status_code == 409 and "edit-conflict" in ids(body)
    assert admin_user.username in body and "now version 2" in body
    assert "<del>Mondays</del><ins>Fridays</ins>" in body
    assert 'name="version" value="2"' in body  # a second Save is deliberate
    assert Memory.objects.get(pk=m.pk).content == "Deploys run on Mondays"
    assert _post(editor_client, Memory.objects.get(pk=m.pk),
                 content="Deploys run on Fridays").status_code == 302
    assert Memory.objects.get(pk=m.pk).content == "Deploys run on Fridays"
