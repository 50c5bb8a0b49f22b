"""The recall log: every recall answers a ``recall_id`` whose trace (who asked what, through
which interface, with which filters and profile, and what it answered, in order) reads back
through ``GET /recalls/{id}`` at once, with no worker; ``GET /recalls`` filters and pages
them; feedback is kept per actor; a purge takes the purged memory out of traces and
feedback; sampling, redaction, the buffer's bound, an unreadable buffered trace and a Redis
that refuses the trace never fail a recall."""

import datetime as dt
import json
from urllib.parse import urlencode

import pytest
from django.test import override_settings

from memories import access, services, store
from memories.models import Memory
from recalls import log as recall_log
from recalls.models import Recall, RecallFeedback, RecallResult
from tests.conftest import ApiClient
from tests.helpers import create, recall_answer

pytestmark = pytest.mark.django_db


def test_a_recall_reads_back_at_once_as_it_answered(api, editor):
    first = create("Alice moved to Lisbon in May", agent_id="planner")
    second = create("Alice visits Lisbon every summer for the festival", agent_id="planner")
    services.memory_update(memory_id=second.memory_id, actor=editor, reason="typo",
                           content="Alice visits Lisbon every summer for the festivals")
    answer = recall_answer(api, "Lisbon Alice", limit=5, agent_id="planner",
                     since="2020-01-01T00:00:00Z")
    assert answer["recall_id"].startswith("rc_")

    trace = api.get(f"/recalls/{answer['recall_id']}")
    assert trace.status_code == 200, trace.content
    body = trace.json()
    assert body["id"] == answer["recall_id"]
    assert (body["user_id"], body["actor"], body["interface"], body["agent_id"]) == (
        "u-a", editor.username, "rest", "planner")
    assert body["query"] == "Lisbon Alice"
    assert body["profile"] == answer["profile"]
    assert body["filters"]["since"].startswith("2020-01-01")
    assert body["filters"]["limit"] == 5
    assert body["took_ms"] == answer["took_ms"]
    assert [(r["memory_id"], r["version"], r["rank"], r["score"]) for r in body["results"]] == [
        (h["memory_id"], h["version"], rank, h["score"])
        for rank, h in enumerate(answer["results"], 1)]
    assert {r["memory_id"]: r["version"] for r in body["results"]} == {
        first.memory_id: 1, second.memory_id: 2}
    assert all("bm25" in r["explain"] and r["explain"]["terms"] for r in body["results"])
    # No memory text is copied into the log.
    assert "Lisbon in May" not in json.dumps(body)


def test_the_client_header_names_the_interface_and_mcp_and_console_are_named(
        api, editor, viewer_client):
    create("Bob likes green tea")
    answer = recall_answer(api, "green tea", headers={"X-Memory-Client": "langgraph"})
    assert not Recall.objects.exists()  # still buffered: the reader writes them
    assert api.get(f"/recalls/{answer['recall_id']}").json()["interface"] == "langgraph"
    odd = recall_answer(api, "green tea", headers={"X-Memory-Client": "curl/8"})
    assert api.get(f"/recalls/{odd['recall_id']}").json()["interface"] == "rest"

    page = viewer_client.get("/search/", {"user_id": "u-a", "q": "green tea"})
    assert page.status_code == 200
    listed = api.get("/recalls?user_id=u-a&interface=console").json()["recalls"]
    assert [(r["query"], r["actor"]) for r in listed] == [("green tea", "vera")]
    # The console's search is an audit: it counts no hit (the two REST recalls did).
    memory = Memory.objects.get(memory_id=listed[0]["results"][0]["memory_id"])
    assert access.with_hits_folded(memory).access_count == 2


def test_a_token_of_one_agent_traces_that_agent(editor):
    create("The planner booked the Porto train", agent_id="planner")
    planner = ApiClient(editor, agents=["planner"])
    answer = recall_answer(planner, "Porto train")
    assert planner.get(f"/recalls/{answer['recall_id']}").json()["agent_id"] == "planner"
    two = ApiClient(editor, agents=["planner", "writer"])
    unnamed = recall_answer(two, "Porto train")
    trace = two.get(f"/recalls/{unnamed['recall_id']}")
    assert trace.status_code == 200  # its own recall, though it names no single agent
    assert trace.json()["agent_id"] is None


def test_the_list_filters_and_pages_newest_first(api, editor):
    create("Carol plays the cello on Sundays")
    for query in ("cello", "Carol cello Sundays", "violin"):
        recall_answer(api, query)
    recall_answer(api, "cello", headers={"X-Memory-Client": "python"})
    page = api.get("/recalls?user_id=u-a&limit=2").json()
    assert len(page["recalls"]) == 2 and page["next_cursor"]
    rest = api.get(f"/recalls?user_id=u-a&limit=2&cursor={page['next_cursor']}").json()
    queries = [r["query"] for r in page["recalls"] + rest["recalls"]]
    assert queries == ["cello", "violin", "Carol cello Sundays", "cello"]
    assert rest["next_cursor"] is None
    assert [r["query"] for r in api.get("/recalls?user_id=u-a&q=SUNDAYS carol")
            .json()["recalls"]] == ["Carol cello Sundays"]
    assert [r["interface"] for r in api.get("/recalls?user_id=u-a&interface=python")
            .json()["recalls"]] == ["python"]
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)).isoformat()
    assert api.get("/recalls?" + urlencode({"user_id": "u-a", "since": later})
                   ).json()["recalls"] == []
    assert len(api.get("/recalls?" + urlencode({"user_id": "u-a", "until": later}))
               .json()["recalls"]) == 4
    bad = api.get("/recalls?user_id=u-a&interface=telnet")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "interface"


def test_another_namespace_or_agent_trace_is_a_404(api, editor, viewer):
    create("Dan's locker code is 4711", user_id="u-b", agent_id="keeper")
    answer = recall_answer(api, "locker code", user_id="u-b", agent_id="keeper")
    only_a = ApiClient(editor, namespaces=["u-a"])
    assert only_a.get(f"/recalls/{answer['recall_id']}").status_code == 404
    assert only_a.get("/recalls?user_id=u-b").status_code == 403
    other_agent = ApiClient(viewer, agents=["planner"])  # another user: not its own recall
    missing = other_agent.get(f"/recalls/{answer['recall_id']}")
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "recall_id"
    assert other_agent.get("/recalls?user_id=u-b").json()["recalls"] == []
    assert api.get("/recalls/rc_0000000000000000").status_code == 404
    assert api.get("/recalls/not-an-id").status_code == 404


def test_feedback_is_kept_per_actor_and_replaced(api, viewer, editor):
    memory = create("Erin is allergic to peanuts")
    other = create("Erin likes peanut-free chocolate")
    unrelated = create("The office is closed on Fridays")
    answer = recall_answer(api, "Erin peanuts")
    rid = answer["recall_id"]

    given = api.post(f"/recalls/{rid}/feedback", {"memory_id": memory.memory_id,
                                                  "useful": True, "note": "exactly"})
    assert given.status_code == 200, given.content
    assert (given.json()["grade"], given.json()["note"]) == (3, "exactly")
    again = api.post(f"/recalls/{rid}/feedback", {"memory_id": memory.memory_id, "grade": 1})
    assert again.json()["id"] == given.json()["id"] and again.json()["grade"] == 1
    reviewer = ApiClient(viewer)
    assert reviewer.post(f"/recalls/{rid}/feedback", {"memory_id": other.memory_id,
                                                      "useful": False}).json()["grade"] == 0
    assert reviewer.post(f"/recalls/{rid}/feedback", {"memory_id": memory.memory_id,
                                                      "grade": 2}).status_code == 200
    rows = RecallFeedback.objects.filter(recall_key=rid)
    assert sorted((f.actor, f.memory_id, f.grade) for f in rows) == sorted([
        (editor.username, memory.memory_id, 1), (viewer.username, other.memory_id, 0),
        (viewer.username, memory.memory_id, 2)])
    assert all(f.query == "Erin peanuts" and f.user_id == "u-a" for f in rows)
    assert len(api.get(f"/recalls/{rid}").json()["feedback"]) == 3

    for body, field in [
        ({"memory_id": unrelated.memory_id, "grade": 3}, "memory_id"),
        ({"memory_id": memory.memory_id}, "grade"),
        ({"memory_id": memory.memory_id, "grade": 2, "useful": True}, "grade"),
        ({"memory_id": memory.memory_id, "grade": 4}, "grade"),
        ({"memory_id": memory.memory_id, "grade": 2, "note": "x" * 2001}, "note"),
    ]:
        refused = api.post(f"/recalls/{rid}/feedback", body)
        assert refused.status_code == 400, (body, refused.content)
        assert refused.json()["error"]["field"] == field, body
    assert api.post("/recalls/rc_0000000000000000/feedback",
                    {"memory_id": memory.memory_id, "grade": 3}).status_code == 404
    assert RecallFeedback.objects.count() == 3


def test_a_purge_takes_the_memory_out_of_traces_and_feedback(api, admin_user):
    kept = create("Frank drives a blue van")
    purged = create("Frank's van plate is KX-221")
    rid = recall_answer(api, "Frank van")["recall_id"]
    api.post(f"/recalls/{rid}/feedback", {"memory_id": purged.memory_id, "useful": True,
                                          "note": "the plate"})
    api.post(f"/recalls/{rid}/feedback", {"memory_id": kept.memory_id, "grade": 2})
    services.memory_purge(memory_id=purged.memory_id, actor=admin_user, reason="erase")
    trace = api.get(f"/recalls/{rid}").json()
    assert [r["memory_id"] for r in trace["results"]] == [kept.memory_id]
    assert [f["memory_id"] for f in trace["feedback"]] == [kept.memory_id]
    assert not RecallResult.objects.filter(memory_id=purged.memory_id).exists()


def test_a_trace_buffered_before_its_memory_was_purged_is_written_without_it(
        api, admin_user):
    kept = create("Gina keeps bees")
    purged = create("Gina keeps bees on the roof at Elm Street 4")
    rid = recall_answer(api, "Gina bees")["recall_id"]  # buffered, not yet written
    assert not Recall.objects.filter(recall_id=rid).exists()
    services.memory_purge(memory_id=purged.memory_id, actor=admin_user, reason="erase")
    results = api.get(f"/recalls/{rid}").json()["results"]
    assert [r["memory_id"] for r in results] == [kept.memory_id]


def test_redis_refusing_the_trace_never_fails_therecall_answer(api):
    create("Hugo collects stamps")
    store.get_client().set(recall_log._buffer_key(), "not a list")
    answer = recall_answer(api, "stamps")
    assert answer["recall_id"] is None and len(answer["results"]) == 1


@override_settings(MEMORY_RECALL_LOG_SAMPLE=0)
def test_sampled_out_recalls_answer_no_recall_id(api):
    create("Ivy runs marathons")
    assert recall_answer(api, "marathons")["recall_id"] is None
    assert api.get("/recalls?user_id=u-a").json()["recalls"] == []


@override_settings(MEMORY_RECALL_LOG_REDACT_QUERY=True)
def test_redaction_keeps_no_query_text_nor_matched_terms(api):
    create("Jack's salary is 90k")
    trace = api.get(f"/recalls/{recall_answer(api, 'Jack salary')['recall_id']}").json()
    assert trace["query"] == "" and "salary" not in json.dumps(trace)
    assert len(trace["results"]) == 1


@override_settings(MEMORY_RECALL_LOG_BUFFER=2)
def test_a_full_buffer_drops_the_oldest_traces(api):
    create("Kim sings in a choir")
    ids = [recall_answer(api, q)["recall_id"] for q in ("choir", "Kim choir", "sings")]
    listed = [r["id"] for r in api.get("/recalls?user_id=u-a").json()["recalls"]]
    assert listed == [ids[2], ids[1]]


def test_an_unreadable_buffered_trace_is_skipped_and_the_rest_written(api):
    create("Lena bakes sourdough")
    first = recall_answer(api, "sourdough")["recall_id"]
    store.get_client().rpush(recall_log._buffer_key(), "{not json", json.dumps({"x": 1}))
    second = recall_answer(api, "Lena")["recall_id"]
    listed = [r["id"] for r in api.get("/recalls?user_id=u-a").json()["recalls"]]
    assert listed == [second, first]
    assert store.get_client().llen(recall_log._buffer_key()) == 0


def test_a_flush_repeated_after_a_crash_writes_each_trace_once(api):
    create("Mo repairs bicycles")
    rid = recall_answer(api, "bicycles")["recall_id"]
    lines = store.get_client().lrange(recall_log._buffer_key(), 0, -1)
    assert recall_log.recall_log_flush() == 1
    store.get_client().rpush(recall_log._buffer_key(), *lines)  # as if the trim was lost
    recall_log.recall_log_flush()
    assert Recall.objects.filter(recall_id=rid).count() == 1
    assert RecallResult.objects.filter(recall_id=rid).count() == 1


def test_expiry_deletes_old_traces_and_keeps_their_feedback(api):
    memory = create("Nora speaks Basque")
    rid = recall_answer(api, "Basque")["recall_id"]
    api.post(f"/recalls/{rid}/feedback", {"memory_id": memory.memory_id, "useful": True})
    fresh = recall_answer(api, "Nora")["recall_id"]
    recall_log.recall_log_flush()
    Recall.objects.filter(recall_id=rid).update(at=dt.datetime.now(dt.UTC)
                                                - dt.timedelta(days=31))
    assert recall_log.recall_log_expire() == 1
    assert list(Recall.objects.values_list("recall_id", flat=True)) == [fresh]
    kept = RecallFeedback.objects.get()
    assert (kept.recall_id, kept.recall_key, kept.query) == (None, rid, "Basque")


def test_the_profile_version_is_the_one_in_force_at_therecall_answer(api, admin_api):
    create("Olga paints watercolours")
    made = admin_api.post("/profiles", {"name": "tuned", "k1": 1.1})
    assert made.status_code == 201, made.content
    before = recall_answer(api, "watercolours", profile="tuned")["recall_id"]
    changed = admin_api.patch("/profiles/tuned", {"k1": 1.4, "reason": "longer texts"})
    assert changed.status_code == 200, changed.content
    after = recall_answer(api, "watercolours", profile="tuned")["recall_id"]
    versions = {rid: api.get(f"/recalls/{rid}").json()["profile_version"]
                for rid in (before, after)}
    assert versions == {before: 1, after: 2}


def test_a_bounded_flush_writes_at_most_its_batches_oldest_first(api, monkeypatch):
    create("Pat restores old clocks")
    ids = [recall_answer(api, q)["recall_id"] for q in ("clocks", "Pat", "old clocks", "restores",
                                                   "Pat clocks")]
    monkeypatch.setattr(recall_log, "BATCH", 2)
    assert recall_log.recall_log_flush(batches=2) == 4
    assert set(Recall.objects.values_list("recall_id", flat=True)) == set(ids[:4])
    assert store.get_client().llen(recall_log._buffer_key()) == 1
    assert recall_log.recall_log_flush() == 1


def test_a_purge_clears_the_questions_that_recalled_the_memory(api, admin_user):
    secret = create("Quentin's safe code is 90210-LYNX")
    other = create("Quentin keeps a lynx poster in the office")
    unrelated = create("The office plants need water on Mondays")
    written = recall_answer(api, "LYNX safe code")["recall_id"]
    api.get(f"/recalls/{written}")  # written to the database
    api.post(f"/recalls/{written}/feedback", {"memory_id": other.memory_id, "grade": 1})
    buffered = recall_answer(api, "Quentin lynx code")["recall_id"]  # still in Redis
    kept = recall_answer(api, "plants water")["recall_id"]

    services.memory_purge(memory_id=secret.memory_id, actor=admin_user, reason="erase")
    for rid in (written, buffered):
        trace = api.get(f"/recalls/{rid}").json()
        assert trace["query"] == "" and trace["time_range"] is None
        assert [r["memory_id"] for r in trace["results"]] == [other.memory_id]
        assert "terms" not in trace["results"][0]["explain"]
        assert "lynx" not in json.dumps(trace).lower()
    assert RecallFeedback.objects.get(recall_key=written).query == ""
    untouched = api.get(f"/recalls/{kept}").json()
    assert untouched["query"] == "plants water"
    assert untouched["results"][0]["memory_id"] == unrelated.memory_id
    assert untouched["results"][0]["explain"]["terms"]


def test_a_trace_json_cannot_hold_is_counted_failed_never_raised():
    from search.results import SearchResult

    found = SearchResult(results=[], match_mode_used="any", profile="bm25", took_ms=1.0,
                         time={"range": object()})
    assert recall_log.recall_log(found=found, user_id="u-a", actor="a", interface="rest",
                                 query="q", agents=[], filters={}) is None
    assert store.get_client().llen(recall_log._buffer_key()) == 0


def test_a_result_row_left_by_a_purge_racing_a_flush_is_not_answered(api, admin_user):
    kept = create("Uma walks her dog at dawn")
    gone = create("Uma walks the dog past Elm Street 9")
    rid = recall_answer(api, "Uma dog")["recall_id"]
    api.get(f"/recalls/{rid}")  # written
    row = RecallResult.objects.get(recall_id=rid, memory_id=gone.memory_id)
    services.memory_purge(memory_id=gone.memory_id, actor=admin_user, reason="erase")
    # As if a flush that had seen the memory alive inserted its row after the purge's delete.
    RecallResult.objects.create(recall_id=rid, memory_id=gone.memory_id, rank=row.rank,
                                version=row.version, score=row.score, explain={})
    assert [r["memory_id"] for r in api.get(f"/recalls/{rid}").json()["results"]] == [
        kept.memory_id]
    assert [r["memory_id"] for r in api.get("/recalls?user_id=u-a").json()["recalls"][0]
            ["results"]] == [kept.memory_id]
