"""The Recalls pages: the log filtered and paged, one recall as it was served (each text at
the version served, marks for what happened since), replayed now beside it with rank
changes, its results graded as lab judgments, its query added to a query set, and a
memory's page saying how it was recalled. Real Redis and database throughout."""

import datetime as dt

import pytest
from django.contrib.auth.models import User

from lab import query_sets as lab_query_sets
from lab.models import Judgment, QuerySet
from memories import services
from memories.models import Memory
from recalls import readers, replay
from recalls.models import Recall
from tests.conftest import ApiClient, login
from tests.helpers import recall_answer
from tests.views.conftest import HX, ids, tags, text

pytestmark = pytest.mark.django_db


def _recall(api: ApiClient, query: str, **kwargs) -> str:
    """A recall through ``POST /api/v1/recall``; its ``recall_id``."""
    return recall_answer(api, query, **kwargs)["recall_id"]


def _rows(body) -> list[str]:
    return [a["data-recall-id"] for tag, a in tags(body) if tag == "tr" and "data-recall-id" in a]


def _column(body, side: str) -> list[str]:
    out, inside = [], None
    for tag, a in tags(body):
        if tag == "ol" and "data-side" in a:
            inside = a["data-side"]
        elif tag == "li" and "data-memory-id" in a and inside == side:
            out.append(a["data-memory-id"])
    return out


@pytest.fixture
def flip(builtins):
    """For "deploy": ``noisy`` leads under bm25 (tf 3, importance 0.05), ``vital`` under
    keyword (importance 0.95 weighs in); both a week old."""
    week_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=7)
    noisy, _ = services.memory_create(user_id="u-a", content="deploy deploy deploy notes",
                                      importance=0.05, created_at=week_ago)
    vital, _ = services.memory_create(
        user_id="u-a", content="the deploy key lives in the vault, rotate it monthly",
        importance=0.95, created_at=week_ago)
    return {"noisy": noisy.memory_id, "vital": vital.memory_id}


# --- the list ---------------------------------------------------------------------------------


def test_it_lists_recalls_newest_first_and_filters_them(api, viewer_client, viewer):
    services.memory_create(user_id="u-a", content="Alice moved to Lisbon in May", agent_id="planner")
    services.memory_create(user_id="u-b", content="Bob likes green tea")
    first = _recall(api, "Lisbon Alice", agent_id="planner")
    second = _recall(api, "green tea", user_id="u-b", headers={"X-Memory-Client": "langgraph"})
    page = viewer_client.get("/search/", {"user_id": "u-a", "q": "where does Alice live"})
    assert page.status_code == 200
    readers.caught_up()
    console = Recall.objects.get(interface="console").recall_id

    everything = viewer_client.get("/recalls/")
    assert everything.status_code == 200 and "<html" in text(everything)
    assert _rows(everything.content) == [console, second, first]
    body = text(everything)
    assert f'href="/recalls/{first}/"' in body and "Lisbon Alice" in body
    assert 'aria-current="page">Recalls</a>' in body

    def only(**params) -> list[str]:
        resp = viewer_client.get("/recalls/", params, headers=HX)
        assert resp.status_code == 200, resp.content
        assert "<html" not in text(resp) and "recall-rows" in ids(resp.content)
        return _rows(resp.content)

    assert only(user_id="u-a") == [console, first]
    assert only(actor=viewer.username) == [console]
    assert only(agent_id="planner") == [first]
    assert only(interface="langgraph") == [second]
    assert only(q="tea GREEN") == [second]
    assert only(q="alice lisbon") == [first]
    today = dt.date.today()
    assert only(since=str(today - dt.timedelta(days=1)), until=str(today + dt.timedelta(days=1))
                ) == [console, second, first]
    assert only(since=str(today + dt.timedelta(days=2))) == []
    assert only(until=str(today - dt.timedelta(days=2))) == []


@pytest.mark.parametrize("params", [
    {"since": "not-a-date"}, {"interface": "telnet"}, {"agent_id": "a" * 200},
    {"since": "2026-05-02", "until": "2026-05-01"}, {"per_page": "1000"}, {"q": "x" * 201},
])
def test_bad_filters_answer_400_with_the_error_in_place(viewer_client, params):
    resp = viewer_client.get("/recalls/", params)
    assert resp.status_code == 400
    assert 'role="alert"' in text(resp)
    assert viewer_client.get("/recalls/", params, headers=HX).status_code == 400


def test_the_pages_need_the_viewer_role_and_the_list_pages(api, viewer_client):
    services.memory_create(user_id="u-a", content="green tea at four")
    made = [_recall(api, "green tea") for _ in range(12)]
    norole_client = login(User.objects.create_user(username="nora", password="pw-nora"))
    assert norole_client.get("/recalls/").status_code == 403
    assert norole_client.get(f"/recalls/{made[0]}/").status_code == 403
    assert viewer_client.post("/recalls/").status_code == 405
    first = viewer_client.get("/recalls/", {"per_page": 10})
    assert len(_rows(first.content)) == 10 and "page 1 of 2" in text(first)
    second = viewer_client.get("/recalls/", {"per_page": 10, "page": 2})
    assert _rows(second.content) == made[1::-1]


# --- one recall -------------------------------------------------------------------------------


def test_a_recall_shows_its_question_and_results_as_served(api, viewer_client, editor):
    kept, _ = services.memory_create(user_id="u-a", content="Porto trip in June, a week long")
    edited, _ = services.memory_create(user_id="u-a", content="Porto hotel booked near the river")
    gone, _ = services.memory_create(user_id="u-a", content="Porto restaurant list for the trip")
    old, _ = services.memory_create(user_id="u-a", content="Porto budget is 5000 euros")
    ended, _ = services.memory_create(user_id="u-a", content="Porto flight leaves at nine")
    recall_id = _recall(api, "Porto", limit=10, since="2020-01-01T00:00:00Z")

    services.memory_update(memory_id=edited.memory_id, actor=editor, reason="moved",
                           content="Porto hotel booked near the cathedral")
    services.memory_forget(memory_id=gone.memory_id, actor=editor, reason="stale")
    newer, _ = services.memory_create(user_id="u-a", content="Porto budget is 6000 euros",
                                      supersedes=[old.memory_id], actor=editor)
    services.memory_invalidate(memory_id=ended.memory_id, actor=editor, reason="cancelled")

    resp = viewer_client.get(f"/recalls/{recall_id}/")
    assert resp.status_code == 200
    body = text(resp)
    trace = Recall.objects.get(recall_id=recall_id)
    served = [r.memory_id for r in trace.results.order_by("rank")]
    assert _column(resp.content, "served") == served
    assert set(served) == {kept.memory_id, edited.memory_id, gone.memory_id, old.memory_id,
                           ended.memory_id}
    assert "u-a" in body and editor.username in body and "rest" in body
    assert f'href="/lab/profiles/{trace.profile}/"' in body
    assert "since <b>2020-01-01" in body and "limit <b>10</b>" in body
    # Each text at the version served: the edit since is marked, its old text shown.
    assert "Porto hotel booked near the river" in body
    assert "near the cathedral" not in body
    assert "edited since (now v2)" in body and body.count("mark-edited") == 1
    assert body.count("mark-forgotten") == 1 and body.count("mark-ended") == 1
    assert f'superseded by <a class="mono" href="/memories/{newer.memory_id}/">' in body
    # A forget, a supersession or an end is not an edit of the text.
    assert "now v3" not in body and body.count("edited since") == 1
    assert "bm25 " in body and "relevance " in body and 'title="BM25 contribution">porto' in body
    assert "replay" not in ids(resp.content) and "column-replay" not in ids(resp.content)


def test_an_unknown_recall_is_a_404(viewer_client, editor_client):
    for path in ("/recalls/rc_0000000000000000/", "/recalls/not-a-recall/"):
        resp = viewer_client.get(path)
        assert resp.status_code == 404 and "This recall does not exist" in text(resp)
    assert editor_client.post("/recalls/rc_0000000000000000/grade/",
                              {"memory_id": "m", "grade": "1"}).status_code == 404
    assert editor_client.post("/recalls/rc_0000000000000000/grade/", {"grade": "1"},
                              headers=HX).status_code == 404
    assert editor_client.post("/recalls/rc_0000000000000000/query-set/",
                              {"name": "x"}).status_code == 404


def test_feedback_given_shows_on_the_recall(api, viewer_client, editor):
    m, _ = services.memory_create(user_id="u-a", content="green tea at four")
    recall_id = _recall(api, "green tea")
    resp = api.post(f"/recalls/{recall_id}/feedback",
                    {"memory_id": m.memory_id, "grade": 2, "note": "close, but old"})
    assert resp.status_code == 200, resp.content
    body = text(viewer_client.get(f"/recalls/{recall_id}/"))
    assert "close, but old" in body and editor.username in body
    listed = viewer_client.get("/recalls/")
    assert '<td data-label="Feedback" class="num">1</td>' in text(listed)


# --- replay -----------------------------------------------------------------------------------


def test_replay_with_another_profile_shows_the_rank_changes_and_traces_nothing(
        api, viewer_client, flip):
    recall_id = _recall(api, "deploy", profile="bm25")
    readers.caught_up()
    trace = Recall.objects.get(recall_id=recall_id)
    assert [r.memory_id for r in trace.results.order_by("rank")] == [flip["noisy"], flip["vital"]]
    hits = Memory.objects.get(memory_id=flip["vital"]).access_count

    resp = viewer_client.get(f"/recalls/{recall_id}/", {"replay": "profile",
                                                        "profile": "keyword"}, headers=HX)
    assert resp.status_code == 200
    body = text(resp)
    assert "<html" not in body and "recall-results" in ids(resp.content)
    assert _column(resp.content, "replay") == [flip["vital"], flip["noisy"]]
    assert _column(resp.content, "served") == [flip["noisy"], flip["vital"]]
    assert 'title="up 1 from A">↑1</span>' in body and 'title="down 1 from A">↓1</span>' in body
    assert "Replayed now with <strong>keyword</strong>" in body

    now = viewer_client.get(f"/recalls/{recall_id}/", {"replay": "now"})
    assert now.status_code == 200 and "<html" in text(now)
    assert _column(now.content, "replay") == [flip["noisy"], flip["vital"]]
    assert "Replayed now with <strong>bm25</strong>" in text(now)
    # A replay observes: no new trace, no recall hit counted.
    assert Recall.objects.count() == 1
    assert Memory.objects.get(memory_id=flip["vital"]).access_count == hits


def test_replay_marks_new_and_gone_results(api, viewer_client, editor, flip):
    recall_id = _recall(api, "deploy", profile="bm25")
    services.memory_forget(memory_id=flip["noisy"], actor=editor, reason="noise")
    fresh, _ = services.memory_create(user_id="u-a", content="deploy freeze starts on Friday")
    body = text(viewer_client.get(f"/recalls/{recall_id}/", {"replay": "now"}))
    assert 'title="not among A\'s results">new</span>' in body
    assert 'title="not in the replay\'s results">gone</span>' in body
    assert f'/memories/{fresh.memory_id}/' in body and "Gone from A:" in body


def test_replay_refuses_a_profile_that_is_not_one(api, viewer_client, flip):
    recall_id = _recall(api, "deploy")
    resp = viewer_client.get(f"/recalls/{recall_id}/", {"replay": "profile", "profile": "nope"})
    assert resp.status_code == 400 and "Select a valid choice" in text(resp)


def test_a_trace_s_filters_become_the_search_arguments_again(api, flip):
    recall_id = _recall(api, "deploy", limit=3, since="2020-01-01T00:00:00Z",
                        until="2030-01-01T00:00:00+02:00", tags=["ops"], as_of=None)
    readers.caught_up()
    trace = Recall.objects.get(recall_id=recall_id)
    args = replay.replay_args(trace)
    assert args["limit"] == 3 and args["tags"] == ["ops"]
    assert args["since"] == dt.datetime(2020, 1, 1, tzinfo=dt.UTC).timestamp()
    assert args["until"] == dt.datetime(2029, 12, 31, 22, tzinfo=dt.UTC).timestamp()
    assert replay.recall_replay(trace).results == []  # no memory tagged ops


# --- grading ----------------------------------------------------------------------------------


def test_grading_a_result_in_place_records_a_lab_judgment(api, editor_client, editor, flip):
    recall_id = _recall(api, "  deploy  ")
    resp = editor_client.post(f"/recalls/{recall_id}/grade/",
                              {"memory_id": flip["vital"], "grade": "3"}, headers=HX)
    assert resp.status_code == 200
    body = text(resp)
    assert "hx-swap-oob" in body and 'value="3" class="grade-btn grade-3" aria-pressed="true"' in body
    judgment = Judgment.objects.get()
    assert (judgment.user_id, judgment.query, judgment.memory_id, judgment.reviewer,
            judgment.grade) == ("u-a", "deploy", flip["vital"], editor.username, 3)
    # The page shows the grade given.
    page = text(editor_client.get(f"/recalls/{recall_id}/"))
    assert 'value="3" class="grade-btn grade-3" aria-pressed="true"' in page

    # Without JavaScript: a plain POST, redirected back to the page it came from.
    back = f"/recalls/{recall_id}/?replay=now"
    plain = editor_client.post(f"/recalls/{recall_id}/grade/",
                               {"memory_id": flip["noisy"], "grade": "0", "next": back})
    assert plain.status_code == 302 and plain["Location"] == back
    assert Judgment.objects.get(memory_id=flip["noisy"]).grade == 0
    elsewhere = editor_client.post(f"/recalls/{recall_id}/grade/", {
        "memory_id": flip["noisy"], "grade": "1", "next": "https://example.com/"})
    assert elsewhere["Location"] == f"/recalls/{recall_id}/"


def test_grading_refuses_bad_input_and_viewers(api, editor_client, viewer_client, flip):
    other, _ = services.memory_create(user_id="u-b", content="deploy elsewhere")
    recall_id = _recall(api, "deploy")
    url = f"/recalls/{recall_id}/grade/"
    assert viewer_client.post(url, {"memory_id": flip["vital"], "grade": "2"}).status_code == 403
    assert editor_client.get(url).status_code == 405
    for bad in ({"memory_id": flip["vital"], "grade": "7"}, {"grade": "1"}):
        assert editor_client.post(url, bad).status_code == 400
        assert editor_client.post(url, bad, headers=HX).status_code == 400
    refused = editor_client.post(url, {"memory_id": other.memory_id, "grade": "1"}, headers=HX)
    assert refused.status_code == 404 and "not found" in text(refused)
    assert not Judgment.objects.exists()
    # A viewer sees no grade buttons.
    assert "grade-btn" not in text(viewer_client.get(f"/recalls/{recall_id}/"))


@pytest.mark.parametrize("override", [{"MEMORY_RECALL_LOG_REDACT_QUERY": True}])
def test_a_redacted_query_cannot_be_graded_or_added(api, editor_client, flip, settings, override):
    for name, value in override.items():
        setattr(settings, name, value)
    recall_id = _recall(api, "deploy")
    page = text(editor_client.get(f"/recalls/{recall_id}/"))
    assert "(query not kept)" in page and "grade-btn" not in page
    assert editor_client.post(f"/recalls/{recall_id}/grade/", {
        "memory_id": flip["vital"], "grade": "1"}).status_code == 400
    assert editor_client.post(f"/recalls/{recall_id}/query-set/",
                              {"name": "x"}).status_code == 400


# --- query sets -------------------------------------------------------------------------------


def test_adding_the_query_to_a_new_or_existing_query_set(api, editor_client, editor, flip):
    recall_id = _recall(api, "deploy key")
    url = f"/recalls/{recall_id}/query-set/"
    made = editor_client.post(url, {"name": "deploys"})
    assert made.status_code == 302 and made["Location"] == f"/recalls/{recall_id}/#query-sets"
    qs = QuerySet.objects.get(name="deploys")
    assert (qs.user_id, qs.queries, qs.created_by) == ("u-a", ["deploy key"], editor.username)
    page = text(editor_client.get(f"/recalls/{recall_id}/"))
    assert f'In <a href="/lab/query-sets/{qs.pk}/">deploys</a>.' in page

    other = lab_query_sets.queryset_create(actor=editor, name="ops", user_id="u-a",
                                           queries=["rotate"])
    lab_query_sets.queryset_create(actor=editor, name="elsewhere", user_id="u-b",
                                   queries=["rotate"])
    page = text(editor_client.get(f"/recalls/{recall_id}/"))
    assert f'<option value="{other.pk}">ops</option>' in page and ">elsewhere<" not in page
    added = editor_client.post(url, {"query_set": other.pk}, headers=HX)
    assert added.status_code == 200
    assert "query-sets" in ids(added.content) and "<html" not in text(added)
    assert "Added “deploy key” to query set ops." in text(added)
    other.refresh_from_db()
    assert other.queries == ["rotate", "deploy key"]


def test_adding_to_a_query_set_shows_errors_in_place(api, editor_client, viewer_client, editor,
                                                      admin_user, flip):
    recall_id = _recall(api, "deploy")
    url = f"/recalls/{recall_id}/query-set/"
    lab_query_sets.queryset_create(actor=editor, name="taken", user_id="u-b", queries=["x"])
    theirs = lab_query_sets.queryset_create(actor=admin_user, name="admins", user_id="u-a",
                                            queries=["x"])
    for data, message in (({}, "Choose a query set or name a new one."),
                          ({"name": "taken"}, "already exists"),
                          ({"query_set": theirs.pk}, "Select a valid choice"),
                          ({"query_set": "abc"}, "Select a valid choice")):
        resp = editor_client.post(url, data, headers=HX)
        assert resp.status_code == 400, (data, resp.status_code)
        assert message in text(resp) and "query-set-form" in ids(resp.content)
        plain = editor_client.post(url, data)
        assert plain.status_code == 400 and "<html" in text(plain)
    assert viewer_client.post(url, {"name": "mine"}).status_code == 403
    assert not QuerySet.objects.filter(name="mine").exists()


# --- the memory's page ------------------------------------------------------------------------


def test_a_memory_s_page_says_how_it_was_recalled(api, viewer_client, editor):
    m, _ = services.memory_create(user_id="u-a", content="green tea at four")
    never, _ = services.memory_create(user_id="u-a", content="an unrelated note")
    first = _recall(api, "green tea")
    second = _recall(api, "tea at four")
    body = text(viewer_client.get(f"/memories/{m.memory_id}/"))
    assert "Recalled <b>2</b> times" in body and f"by {editor.username}" in body
    assert (body.index(f'href="/recalls/{second}/"') < body.index(f'href="/recalls/{first}/"'))
    assert ">tea at four</a>" in body
    quiet = text(viewer_client.get(f"/memories/{never.memory_id}/"))
    assert "Not recalled within the recall log" in quiet


def test_the_memory_page_stands_when_an_admin_purges_a_recalled_memory(api, viewer_client,
                                                                       admin_user):
    m, _ = services.memory_create(user_id="u-a", content="green tea at four")
    kept, _ = services.memory_create(user_id="u-a", content="green tea in the morning")
    recall_id = _recall(api, "green tea")
    services.memory_purge(memory_id=m.memory_id, actor=admin_user, reason="gdpr")
    resp = viewer_client.get(f"/recalls/{recall_id}/")
    assert resp.status_code == 200
    assert _column(resp.content, "served") == [kept.memory_id]
