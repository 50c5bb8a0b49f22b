"""The recall log under attack: a token restricted to agents reads only its agents' traces
(and its own recalls, not its user's other tokens'), a buffered trace of the wrong shape
never stops the log, and odd input is a 400, never a 5xx."""

import json

import pytest
from django.test import override_settings

from memories import store
from recalls import log as recall_log
from recalls.models import Recall
from tests.conftest import ApiClient, login
from tests.helpers import create, recall_answer

pytestmark = pytest.mark.django_db


def test_an_agent_token_does_not_read_its_users_other_recalls(api, editor):
    secret = create("The keeper's safe code is 1234", agent_id="keeper")
    create("The planner books trains", agent_id="planner")
    unnamed = recall_answer(api, "safe code")["recall_id"]  # the user's unrestricted token
    named = recall_answer(api, "safe code", agent_id="keeper")["recall_id"]
    planner = ApiClient(editor, agents=["planner"])  # the same user, another token
    for rid in (unnamed, named):
        assert planner.get(f"/recalls/{rid}").status_code == 404
        assert planner.post(f"/recalls/{rid}/feedback", {
            "memory_id": secret.memory_id, "grade": 3}).status_code == 404
    listed = planner.get("/recalls?user_id=u-a").json()["recalls"]
    assert secret.memory_id not in json.dumps(listed)
    own = recall_answer(planner, "trains")["recall_id"]
    assert planner.get(f"/recalls/{own}").status_code == 200
    assert [r["id"] for r in planner.get("/recalls?user_id=u-a").json()["recalls"]] == [own]


def test_an_agent_token_does_not_read_its_users_console_recalls(editor, client):
    create("The keeper's safe code is 1234", agent_id="keeper")
    client.force_login(editor)
    assert client.get("/search/", {"user_id": "u-a", "q": "safe code"}).status_code == 200
    planner = ApiClient(editor, agents=["planner"])
    assert planner.get("/recalls?user_id=u-a").json()["recalls"] == []
    rid = Recall.objects.get().recall_id  # written by the read above
    assert planner.get(f"/recalls/{rid}").status_code == 404


@pytest.mark.parametrize("line", [
    {"results": [1, 2]},
    {"results": [{"memory_id": ["x"], "rank": 1, "version": 1, "score": 1.0}]},
    {"results": [{"memory_id": "m_x"}]},
    {"profile": None},
    {"profile": ["x"]},
    {"at": 5},
    {"at": "2024-01-01T00:00:00"},
    {"took_ms": "x"},
    {"filters": "x"},
    {"recall_id": 5},
    {"user_id": None},
    {"token_id": "7"},
    {"time_range": [1]},
    {"results": [{"memory_id": "m_x", "rank": "1", "version": 1, "score": 1.0,
                  "explain": {}}]},
    [1, 2],
    "just a string",
    5,
])
def test_a_buffered_trace_of_the_wrong_shape_never_blocks_the_log(api, line):
    memory = create("Lena bakes sourdough")
    first = recall_answer(api, "sourdough")["recall_id"]
    good = json.loads(store.get_client().lrange(recall_log._buffer_key(), 0, 0)[0])
    if isinstance(line, dict):
        bad = {**good, "recall_id": "rc_00000000000000ff", **line}
        if line.get("results") == [{"memory_id": "m_x"}]:
            bad["results"] = [{"memory_id": memory.memory_id}]
    else:
        bad = line
    store.get_client().rpush(recall_log._buffer_key(), json.dumps(bad))
    second = recall_answer(api, "Lena")["recall_id"]
    answer = api.get("/recalls?user_id=u-a")
    assert answer.status_code == 200, answer.content
    listed = [r["id"] for r in answer.json()["recalls"]]
    assert first in listed and second in listed
    assert store.get_client().llen(recall_log._buffer_key()) == 0


@pytest.mark.parametrize("body", [
    {"grade": True}, {"grade": "3"}, {"grade": 2.5}, {"useful": "yes"}, {"useful": 1},
    {"grade": 2, "note": "bell\x07"}, {"grade": 2, "note": "nul\x00"},
    {"grade": 2, "note": 5}, {"grade": None, "useful": None},
])
def test_feedback_of_the_wrong_type_is_a_400(api, body):
    memory = create("Erin is allergic to peanuts")
    rid = recall_answer(api, "peanuts")["recall_id"]
    refused = api.post(f"/recalls/{rid}/feedback", {"memory_id": memory.memory_id, **body})
    assert refused.status_code == 400, (body, refused.status_code, refused.content)


@override_settings(MEMORY_RECALL_LOG_REDACT_QUERY=True)
def test_redaction_keeps_no_words_of_the_query_in_its_time_range(api):
    create("Jack's salary is 90k")
    answer = recall_answer(api, "Jack salary in May 2024")
    assert answer["time"]["from"] == "in May 2024"  # the recall's answer says it
    trace = api.get(f"/recalls/{answer['recall_id']}").json()
    assert trace["query"] == "" and "May" not in json.dumps(trace)
    assert trace["time_range"]["range"] == "2024-05-01..2024-05-31"


@pytest.mark.parametrize("filters", [
    {"limit": "x"}, {"limit": True}, {"types": 5}, {"metadata": "x"}, {"tags": [1]},
    {"conversation_id": ["x"]}, {"agents": "planner"}, {"include_superseded": "yes"},
])
def test_replaying_a_trace_with_filters_of_another_type_says_so(api, editor, filters):
    create("Lena bakes sourdough")
    rid = recall_answer(api, "sourdough")["recall_id"]
    assert api.get(f"/recalls/{rid}").status_code == 200  # written
    Recall.objects.filter(recall_id=rid).update(filters=filters)  # an older writer's row
    page = login(editor).get(f"/recalls/{rid}/", {"replay": "1", "profile": ""})
    assert page.status_code == 400, (filters, page.status_code)
    assert b"The replay cannot run" in page.content


def test_a_flush_whose_lock_lapsed_trims_nothing_another_flush_did_not_write(
        api, monkeypatch):
    create("Pat restores old clocks")
    first = [recall_answer(api, q)["recall_id"] for q in ("clocks", "Pat", "old clocks")]
    monkeypatch.setattr(recall_log, "BATCH", 2)
    write, later = recall_log._write, []

    def slow_write(lines):
        # This flush outlives its lock; another one writes the whole buffer meanwhile and
        # new recalls are buffered before this one trims its batch.
        store.get_client().delete(recall_log._lock_key())
        monkeypatch.setattr(recall_log, "_write", write)
        assert recall_log.recall_log_flush() == 3
        later.extend(recall_answer(api, q)["recall_id"] for q in ("restores", "Pat clocks"))
        return write(lines)

    monkeypatch.setattr(recall_log, "_write", slow_write)
    recall_log.recall_log_flush()
    recall_log.recall_log_flush()
    assert set(Recall.objects.values_list("recall_id", flat=True)) == {*first, *later}
