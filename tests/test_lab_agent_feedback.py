"""Agent feedback as a rater of the ranking lab: a query set made of a namespace's logged
queries that received recall feedback (API and the query sets page), and a run whose gains
are that feedback (one grade per query and memory: each actor's latest, their mean rounded
half up), through the API and the run form, labelled on the run page."""

import pytest

from lab import judgments as lab_judgments
from lab.judgments import AGENT_FEEDBACK
from lab.models import EvalRun, QuerySet
from memories import services
from memories.errors import InvalidInput
from tests.views.conftest import ids, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(api, viewer_api, admin_api, builtins):
    """BM25 ranks "alpha" m1 > m2 > m3 and "gamma" m2 > m3. Feedback on "alpha": the editor
    gave m3 3 and m2 2, then (a second recall of the same query, spaced differently) m2 0;
    the viewer m3 2 and m2 0. On "gamma" the admin gave m3 1."""
    made = {}
    for key, text_ in (("m1", "alpha alpha alpha beta"), ("m2", "alpha beta gamma delta"),
                       ("m3", "alpha gamma delta epsilon zeta eta"), ("m4", "omega psi chi")):
        made[key] = services.memory_create(user_id="u-lab", content=text_,
                                           importance=0.5)[0].memory_id

    def recall(client, query):
        resp = client.post("/recall", {"user_id": "u-lab", "query": query})
        assert resp.status_code == 200, resp.content
        return resp.json()["recall_id"]

    def give(client, recall_id, key, grade):
        resp = client.post(f"/recalls/{recall_id}/feedback",
                           {"memory_id": made[key], "grade": grade})
        assert resp.status_code == 200, resp.content

    first = recall(api, "alpha")
    give(api, first, "m3", 3)
    give(api, first, "m2", 2)
    give(viewer_api, first, "m3", 2)
    give(viewer_api, first, "m2", 0)
    give(api, recall(api, "  alpha "), "m2", 0)
    give(admin_api, recall(admin_api, "gamma"), "m3", 1)
    return made


def test_the_rater_is_each_actors_latest_grade_averaged_and_rounded(graded):
    grades = lab_judgments.feedback_grades(user_id="u-lab", queries=["alpha", "gamma", "beta"])
    # m3: (3 + 2) / 2 = 2.5, rounded half up; m2: the editor's latest (0) and the viewer's 0.
    assert grades == {"alpha": {graded["m3"]: 3.0, graded["m2"]: 0.0},
                      "gamma": {graded["m3"]: 1.0}}
    assert lab_judgments.feedback_grades(user_id="u-other", queries=["alpha"]) == {}


def test_a_query_set_from_feedback_and_a_run_rated_by_agent_feedback(api, editor, graded):
    resp = api.post("/query-sets", {"name": "from agents", "user_id": "u-lab",
                                    "from_feedback": True})
    assert resp.status_code == 201, resp.content
    qs = resp.json()
    assert qs["queries"] == ["alpha", "gamma"]  # most graded first, white space collapsed
    one = api.post("/query-sets", {"name": "top one", "user_id": "u-lab",
                                   "from_feedback": True, "limit": 1})
    assert one.status_code == 201 and one.json()["queries"] == ["alpha"]

    none = api.post("/query-sets", {"name": "empty", "user_id": "u-none", "from_feedback": True})
    assert none.status_code == 400 and none.json()["error"]["field"] == "user_id"
    both = api.post("/query-sets", {"name": "both", "user_id": "u-lab", "queries": ["alpha"],
                                    "from_feedback": True})
    assert both.status_code == 400 and both.json()["error"]["field"] == "queries"
    stray = api.post("/query-sets", {"name": "stray", "user_id": "u-lab", "queries": ["a"],
                                     "limit": 3})
    assert stray.status_code == 400 and stray.json()["error"]["field"] == "limit"
    missing = api.post("/query-sets", {"name": "missing", "user_id": "u-lab"})
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "queries"
    plain = api.post("/query-sets", {"name": "plain", "user_id": "u-lab", "queries": ["alpha"]})
    assert plain.status_code == 201  # the shape without from_feedback is unchanged

    # A human judgment is not agent feedback: it leaves the agent-feedback run alone.
    lab_judgments.judgment_set(actor=editor, user_id="u-lab", query="alpha",
                               memory_id=graded["m1"], grade=3)
    resp = api.post("/runs", {"name": "agents", "query_set": qs["id"], "profiles": ["bm25"],
                              "k": 3, "reviewer": AGENT_FEEDBACK})
    assert resp.status_code == 201, resp.content
    run = resp.json()
    assert run["reviewer"] == "agent feedback"
    rows = {r["query"]: r for r in run["per_query"]}
    assert rows["alpha"]["ranked"] == [graded["m1"], graded["m2"], graded["m3"]]
    assert rows["alpha"]["gains"] == {graded["m2"]: 0.0, graded["m3"]: 3.0}
    assert rows["alpha"]["mrr"] == pytest.approx(1 / 3)
    assert rows["gamma"]["gains"] == {graded["m3"]: 1.0} and rows["gamma"]["mrr"] == 0.5
    assert run["metrics"]["bm25"]["queries"] == 2
    assert run["metrics"]["bm25"]["mrr"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    # Results no agent graded are the ones to look at next.
    assert [(u["query"], u["memory_id"]) for u in run["unjudged"]] == [
        ("alpha", graded["m1"]), ("gamma", graded["m2"])]

    judged = api.post("/runs", {"name": "people", "query_set": qs["id"], "profiles": ["bm25"],
                                "k": 3})
    assert judged.json()["per_query"][0]["gains"] == {graded["m1"]: 3.0}


def test_the_console_makes_the_set_and_the_run_and_labels_it(editor_client, viewer_client,
                                                             graded):
    page = text(editor_client.get("/lab/query-sets/"))
    assert {"from-feedback", "feedback-queryset-form", "queryset-form"} <= ids(page)

    refused = editor_client.post("/lab/query-sets/", {"fb-name": "nothing", "fb-user_id": "u-lab",
                                                     "fb-limit": "0", "fb-from_feedback": "1"})
    assert refused.status_code == 400 and not QuerySet.objects.exists()
    resp = editor_client.post("/lab/query-sets/", {"fb-name": "from agents",
                                                  "fb-user_id": "u-lab", "fb-from_feedback": "1"})
    assert resp.status_code == 302, text(resp)
    qs = QuerySet.objects.get()
    assert qs.queries == ["alpha", "gamma"] and resp["Location"] == f"/lab/query-sets/{qs.pk}/"
    detail = text(editor_client.get(resp["Location"]))
    assert "run-agent-feedback" in ids(detail)
    viewer_post = viewer_client.post("/lab/query-sets/", {
        "fb-name": "viewer's", "fb-user_id": "u-lab", "fb-from_feedback": "1"})
    assert viewer_post.status_code == 403

    form = text(editor_client.get("/lab/runs/", {"query_set": qs.pk, "rater": "agent"}))
    assert '<option value="agent" selected>' in form
    resp = editor_client.post("/lab/runs/", {"name": "agents", "query_set": qs.pk,
                                             "profiles": ["bm25"], "k": "3", "rater": "agent",
                                             "reviewer": "ignored"})
    assert resp.status_code == 302, text(resp)
    run = EvalRun.objects.get()
    assert run.reviewer == AGENT_FEEDBACK and run.metrics["bm25"]["queries"] == 2
    page = text(editor_client.get(resp["Location"]))
    assert "rater-agent-feedback" in ids(page) and "agent feedback's grades" not in page

    # A post without the rater (an older form) still rates with the judgments.
    editor_client.post("/lab/runs/", {"name": "people", "query_set": qs.pk,
                                      "profiles": ["bm25"], "k": "3"})
    assert EvalRun.objects.get(name="people").reviewer == ""


def test_no_judgments_are_imported_under_the_agents_name(admin_user):
    csv_text = f"namespace,query,memory_id,grade,rater\nu-lab,alpha,mem_0000000000000001,2,{AGENT_FEEDBACK}\n"
    result = lab_judgments.judgments_import_csv(actor=admin_user, text=csv_text)
    assert result["created"] == 0 and result["errors"][0]["field"] == "rater"
    with pytest.raises(InvalidInput):
        lab_judgments.judgments_import_csv(actor=admin_user, text="no,columns\n")
