"""Ranking lab API: profiles (create / change / delete rules, versions), evaluate against
hand-computed metrics, judgments kept apart per reviewer, query sets and immutable runs."""

import math

import pytest

from lab import evaluation as lab_evaluation
from lab import judgments as lab_judgments
from lab.models import EvalRun, Judgment
from memories import services
from search import agreement
from search.models import RankingProfile

pytestmark = pytest.mark.django_db


def error_of(resp) -> dict:
    return resp.json()["error"]


@pytest.fixture
def corpus(builtins):
    """Three memories whose BM25 order for "alpha" is m1 > m2 > m3 (tf 3, then tf 1 in a
    shorter, then in a longer document), and an unrelated fourth."""
    made = {}
    for key, text in (
        ("m1", "alpha alpha alpha beta"),
        ("m2", "alpha beta gamma delta"),
        ("m3", "alpha gamma delta epsilon zeta eta"),
        ("m4", "omega psi chi"),
    ):
        memory, _ = services.memory_create(user_id="u-lab", content=text, importance=0.5)
        made[key] = memory.memory_id
    return made


# --- profiles ----------------------------------------------------------------------------------


def test_it_creates_a_profile_owned_by_the_editor(api):
    resp = api.post(
        "/profiles",
        {
            "name": "recent-first",
            "ranker": "bm25",
            "w_relevance": 0.5,
            "w_recency": 0.5,
            "half_life_hours": 48,
        },
    )
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["name"] == "recent-first" and body["w_recency"] == 0.5
    assert body["created_by"] == "eddie" and body["version"] == 1 and not body["builtin"]
    listed = {p["name"] for p in api.get("/profiles").json()["profiles"]}
    assert "recent-first" in listed


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "b": 2}, "b"),
        ({"name": "x", "k1": -1}, "k1"),
        ({"name": "x", "ranker": "dense"}, "ranker"),
        ({"name": "x", "half_life_hours": 0}, "half_life_hours"),
        ({"name": "x", "match_mode": "some"}, "match_mode"),
        ({"name": "x", "w_relevance": 0, "w_recency": 0, "w_importance": 0}, "w_relevance"),
        ({"name": "bad name!"}, "name"),
        ({"name": "x", "colour": "red"}, "colour"),
        ({"ranker": "bm25"}, "name"),
    ],
)
def test_a_bad_profile_is_a_400_naming_the_field(api, body, field):
    resp = api.post("/profiles", body)
    assert resp.status_code == 400 and error_of(resp)["field"] == field


def test_a_taken_name_is_refused(api):
    resp = api.post("/profiles", {"name": "bm25"})
    assert resp.status_code == 400 and error_of(resp)["field"] == "name"


def test_roles_for_creating_profiles(viewer_api, api):
    assert viewer_api.post("/profiles", {"name": "v1"}).status_code == 403
    # Only admins choose the default.
    assert api.post("/profiles", {"name": "e1", "is_default": True}).status_code == 403
    assert not RankingProfile.objects.filter(name__in=["v1", "e1"]).exists()


def test_editors_change_their_own_profiles_and_admins_any(api, admin_api):
    api.post("/profiles", {"name": "mine"})
    admin_api.post("/profiles", {"name": "theirs"})
    resp = api.patch("/profiles/mine", {"w_relevance": 0.4, "w_importance": 0.6})
    assert resp.status_code == 200 and resp.json()["w_importance"] == 0.6
    assert resp.json()["version"] == 2
    assert api.patch("/profiles/theirs", {"k1": 1.0}).status_code == 403
    assert admin_api.patch("/profiles/mine", {"k1": 1.0}).json()["k1"] == 1.0
    assert api.patch("/profiles/nope", {"k1": 1.0}).status_code == 404
    resp = api.patch("/profiles/mine", {"b": 5})
    assert resp.status_code == 400 and error_of(resp)["field"] == "b"
    resp = api.patch("/profiles/mine", {"name": "renamed"})
    assert resp.status_code == 200 and resp.json()["name"] == "renamed"
    assert api.get("/profiles/renamed").json()["version"] == 4


def test_every_change_is_a_version_with_its_settings(api):
    api.post("/profiles", {"name": "v", "w_relevance": 1.0})
    api.patch("/profiles/v", {"w_relevance": 0.5, "w_recency": 0.5, "reason": "fresher"})
    api.patch("/profiles/v", {"w_relevance": 0.5})  # no change: no version
    versions = api.get("/profiles/v/history").json()["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    assert [v["w_recency"] for v in versions] == [0.0, 0.5]
    assert versions[1]["change"] == "update" and versions[1]["reason"] == "fresher"
    assert versions[1]["changed_by"] == "eddie"


def test_built_ins_keep_name_and_settings_but_can_become_default(admin_api):
    resp = admin_api.patch("/profiles/bm25", {"name": "plain"})
    assert resp.status_code == 400 and error_of(resp)["field"] == "name"
    resp = admin_api.patch("/profiles/keyword", {"w_importance": 0.9})
    assert resp.status_code == 400 and error_of(resp)["field"] == "w_importance"
    old_default = RankingProfile.objects.get(is_default=True)
    resp = admin_api.patch("/profiles/keyword", {"is_default": True})
    assert resp.status_code == 200 and resp.json()["is_default"]
    assert list(RankingProfile.objects.filter(is_default=True).values_list("name", flat=True)) == [
        "keyword"
    ]
    # Unsetting the old default was a recorded version too.
    old_default.refresh_from_db()
    assert old_default.history.count() >= 2 and not old_default.history.first().is_default
    resp = admin_api.patch("/profiles/keyword", {"is_default": False})
    assert resp.status_code == 400 and error_of(resp)["field"] == "is_default"


def test_only_admins_set_the_default(api):
    api.post("/profiles", {"name": "mine"})
    assert api.patch("/profiles/mine", {"is_default": True}).status_code == 403


def test_delete_rules(api, admin_api):
    api.post("/profiles", {"name": "doomed"})
    assert api.delete("/profiles/doomed").status_code == 403
    for name in ("bm25", "keyword"):
        resp = admin_api.delete(f"/profiles/{name}")
        assert resp.status_code == 400 and error_of(resp)["field"] == "name"
    default = RankingProfile.objects.get(is_default=True).name
    resp = admin_api.delete(f"/profiles/{default}")
    assert resp.status_code == 400 and error_of(resp)["field"] == "name"
    assert admin_api.delete("/profiles/doomed").status_code == 204
    assert admin_api.delete("/profiles/doomed").status_code == 404
    history = RankingProfile.history.filter(name="doomed").order_by("history_date")
    assert [h.history_type for h in history] == ["+", "-"]


def test_anonymous_gets_401(client, builtins):
    resp = client.post("/api/v1/profiles", data={"name": "x"}, content_type="application/json")
    assert resp.status_code == 401


# --- evaluate ----------------------------------------------------------------------------------


def test_evaluate_matches_hand_computed_metrics(viewer_api, corpus):
    """Ranking for "alpha" with bm25 is m1, m2, m3. Query 1 grades m2 = 3, m3 = 1:
    DCG = (2^3-1)/log2(3) + (2^1-1)/log2(4) = 4.416508 + 0.5;
    IDCG = 7/log2(2) + 1/log2(3) = 7.630930; nDCG = 0.644287; P@3 = 2/3; recall 1; RR 1/2.
    Query 2's only relevant memory is not retrieved: every metric 0. Means are halves."""
    resp = viewer_api.post(
        "/evaluate",
        {
            "profile": "bm25",
            "k": 3,
            "queries": [
                {
                    "user_id": "u-lab",
                    "query": "alpha",
                    "relevant": {corpus["m2"]: 3, corpus["m3"]: 1},
                },
                {"user_id": "u-lab", "query": "alpha", "relevant": [corpus["m4"]]},
            ],
        },
    )
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert set(body) == {"k", "metrics", "per_query"} and body["k"] == 3
    q1, q2 = body["per_query"]
    assert q1["results"] == [corpus["m1"], corpus["m2"], corpus["m3"]]
    ndcg = (7 / math.log2(3) + 1 / 2) / (7 + 1 / math.log2(3))
    assert q1["ndcg"] == pytest.approx(ndcg) and ndcg == pytest.approx(0.644287, abs=1e-6)
    assert q1["precision"] == pytest.approx(2 / 3) and q1["recall"] == 1.0
    assert q1["mrr"] == 0.5
    assert (q2["ndcg"], q2["precision"], q2["recall"], q2["mrr"]) == (0.0, 0.0, 0.0, 0.0)
    assert body["metrics"] == pytest.approx(
        {"ndcg": ndcg / 2, "precision": 1 / 3, "recall": 0.5, "mrr": 0.25}
    )


def test_evaluate_counts_mrr_within_the_top_k(viewer_api, corpus):
    resp = viewer_api.post(
        "/evaluate",
        {
            "profile": "bm25",
            "k": 2,
            "queries": [{"user_id": "u-lab", "query": "alpha", "relevant": [corpus["m3"]]}],
        },
    )
    assert resp.json()["metrics"]["mrr"] == 0.0 and resp.json()["per_query"][0]["results"] == [
        corpus["m1"],
        corpus["m2"],
    ]


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (
            {
                "profile": "nope",
                "k": 3,
                "queries": [{"user_id": "u", "query": "x", "relevant": []}],
            },
            404,
            "profile",
        ),
        (
            {
                "profile": "bm25",
                "k": 0,
                "queries": [{"user_id": "u", "query": "x", "relevant": []}],
            },
            400,
            "k",
        ),
        ({"profile": "bm25", "k": 3, "queries": []}, 400, "queries"),
        (
            {
                "profile": "bm25",
                "k": 3,
                "queries": [{"user_id": "u", "query": "x", "relevant": {"a": 7}}],
            },
            400,
            "queries.0.relevant",
        ),
        (
            {
                "profile": "bm25",
                "k": 3,
                "queries": [{"user_id": " u", "query": "x", "relevant": []}],
            },
            400,
            "queries.0.user_id",
        ),
        ({"profile": "bm25", "k": 3, "extra": 1, "queries": []}, 400, "extra"),
        # The size of the work one request asks for is bounded, each bound named.
        ({"k": 101, "queries": [{"user_id": "u", "query": "x", "relevant": []}]}, 400, "k"),
        ({"queries": [{"user_id": "u", "query": "x", "relevant": []}] * 501}, 400, "queries"),
        ({"queries": [{"user_id": "u", "query": "tea " * 250 + "x", "relevant": []}]}, 400,
         "queries.0.query"),
        ({"queries": [{"user_id": "u", "query": "x",
                       "relevant": [f"mem_{n:016x}" for n in range(1001)]}]}, 400,
         "queries.0.relevant"),
        ({"queries": [{"user_id": "u", "query": "x",
                       "relevant": {f"mem_{n:016x}": 1 for n in range(1001)}}]}, 400,
         "queries.0.relevant"),
    ],
)
def test_evaluate_rejects_bad_input(viewer_api, builtins, body, status, field):
    resp = viewer_api.post("/evaluate", body)
    assert resp.status_code == status and error_of(resp)["field"] == field


def test_evaluate_stops_at_its_time_limit_with_a_413_saying_how_far_it_got(
        viewer_api, corpus, settings):
    """The time one request may hold its worker: a limit of 0 s stops after the first
    search (checked after each one), naming the field, the limit and the progress."""
    settings.MEMORY_EVALUATION_SECONDS = 0
    queries = [{"user_id": "u-lab", "query": q, "relevant": [corpus["m1"]]}
               for q in ("alpha", "beta", "gamma")]
    resp = viewer_api.post("/evaluate", {"profile": "bm25", "k": 3, "queries": queries})
    assert resp.status_code == 413, resp.content
    error = error_of(resp)
    assert (error["code"], error["field"]) == ("too_large", "queries")
    assert (error["limit_seconds"], error["done"], error["total"]) == (0, 1, 3)
    assert "MEMORY_EVALUATION_SECONDS" in error["message"]
    settings.MEMORY_EVALUATION_SECONDS = 60
    assert viewer_api.post("/evaluate", {"profile": "bm25", "k": 3, "queries": queries}
                           ).status_code == 200


def test_evaluations_beyond_the_shared_slots_answer_429_until_one_ends(
        viewer_api, api, corpus, settings):
    """Nine evaluations at once held nine worker threads for their whole time limit and a
    tiny recall waited 84 s. At most MEMORY_EVALUATIONS_AT_ONCE run together, across every
    process (slots in Redis); another answers 429 with Retry-After, naming its field, and a
    slot left by a crashed process ends with its lease."""
    from lab.evaluation import Deadline
    from memories import store

    settings.MEMORY_EVALUATIONS_AT_ONCE = 1
    body = {"profile": "bm25", "k": 3,
            "queries": [{"user_id": "u-lab", "query": "alpha", "relevant": [corpus["m1"]]}]}
    qs = api.post("/query-sets", {"name": "busy", "user_id": "u-lab",
                                  "queries": ["alpha"]}).json()
    with Deadline(field="elsewhere"):  # another request's evaluation, under way
        busy = viewer_api.post("/evaluate", body)
        assert busy.status_code == 429, busy.content
        assert (error_of(busy)["code"], error_of(busy)["field"]) == ("busy", "queries")
        assert int(busy["Retry-After"]) >= 1
        run = api.post("/runs", {"name": "r", "query_set": qs["id"], "profiles": ["bm25"]})
        assert run.status_code == 429 and error_of(run)["field"] == "query_set"
        assert not EvalRun.objects.exists()
    assert viewer_api.post("/evaluate", body).status_code == 200  # the slot was given back
    # A crashed process's slot: its lease is over, so it no longer counts.
    store.get_client().zadd(store.global_key("evaluations"), {"crashed": 1.0})
    assert viewer_api.post("/evaluate", body).status_code == 200


def test_a_run_past_its_time_limit_is_a_413_and_saves_nothing(api, corpus, settings):
    from memories.models import AuditEvent

    qs = api.post("/query-sets", {"name": "three", "user_id": "u-lab",
                                  "queries": ["alpha", "beta", "gamma"]}).json()
    settings.MEMORY_EVALUATION_SECONDS = 0
    resp = api.post("/runs", {"name": "r", "query_set": qs["id"],
                              "profiles": ["bm25", "keyword"]})
    assert resp.status_code == 413, resp.content
    error = error_of(resp)
    assert (error["field"], error["done"], error["total"]) == ("query_set", 1, 6)
    assert not EvalRun.objects.exists()
    assert not AuditEvent.objects.filter(action="run_create").exists()


# --- judgments -------------------------------------------------------------------------------


def test_two_reviewers_judgments_are_kept_apart(api, admin_api, corpus):
    body = {"user_id": "u-lab", "query": "alpha", "memory_id": corpus["m2"], "grade": 1}
    assert api.post("/judgments", body).status_code == 201
    assert admin_api.post("/judgments", {**body, "grade": 3}).status_code == 201
    assert api.post("/judgments", {**body, "grade": 2}).status_code == 200  # replaces eddie's
    rows = api.get("/judgments?user_id=u-lab&query=alpha").json()["judgments"]
    assert sorted((j["reviewer"], j["grade"]) for j in rows) == [("ada", 3), ("eddie", 2)]
    assert lab_judgments.judgment_grades(user_id="u-lab", query="alpha", reviewer="eddie") == {
        corpus["m2"]: 2.0
    }
    assert lab_judgments.judgment_grades(user_id="u-lab", query="  alpha ") == {corpus["m2"]: 2.5}


def test_judgment_input_rules(api, viewer_api, corpus):
    body = {"user_id": "u-lab", "query": "alpha", "memory_id": corpus["m1"], "grade": 2}
    assert viewer_api.post("/judgments", body).status_code == 403
    resp = api.post("/judgments", {**body, "grade": 4})
    assert resp.status_code == 400 and error_of(resp)["field"] == "grade"
    resp = api.post("/judgments", {**body, "user_id": "someone-else"})
    assert resp.status_code == 404 and error_of(resp)["field"] == "memory_id"
    resp = api.post("/judgments", {**body, "query": "   "})
    assert resp.status_code == 400 and error_of(resp)["field"] == "query"
    for loose in (True, "3", 2.0):  # no type is read as a grade it is not
        resp = api.post("/judgments", {**body, "grade": loose})
        assert resp.status_code == 400 and error_of(resp)["field"] == "grade", loose
    assert Judgment.objects.count() == 0


# --- query sets and runs ------------------------------------------------------------------------


def _judge(user, memory_id, grade, query="alpha"):
    lab_judgments.judgment_set(actor=user, user_id="u-lab", query=query, memory_id=memory_id, grade=grade)


def test_a_run_records_metrics_versions_and_stays_the_same(api, editor, corpus):
    """A run holds what it measured; changing the profile afterwards changes nothing in it,
    and the next run records the new version."""
    api.post("/profiles", {"name": "mine", "ranker": "bm25"})
    qs = api.post(
        "/query-sets",
        {
            "name": "greek",
            "user_id": "u-lab",
            "queries": ["alpha", "omega", "alpha", "nothing here"],
        },
    ).json()
    assert qs["queries"] == ["alpha", "omega", "nothing here"]
    _judge(editor, corpus["m2"], 3)
    _judge(editor, corpus["m1"], 0)
    _judge(editor, corpus["m4"], 2, query="omega")
    resp = api.post("/runs", {"name": "first", "query_set": qs["id"], "profiles": ["mine"], "k": 3})
    assert resp.status_code == 201, resp.content
    run = resp.json()
    assert run["profiles"][0]["name"] == "mine" and run["profiles"][0]["version"] == 1
    assert run["profiles"][0]["history_id"] is not None
    assert run["index_stats"]["u-lab"]["c"]["N"] == 4
    # alpha: m1 (0), m2 (3), m3 (unjudged): nDCG = 7/log2(3) / 7; omega: m4 first: 1.
    alpha = next(r for r in run["per_query"] if r["query"] == "alpha")
    assert alpha["ndcg"] == pytest.approx(1 / math.log2(3)) and alpha["mrr"] == 0.5
    nothing = next(r for r in run["per_query"] if r["query"] == "nothing here")
    assert nothing["judged"] is False and nothing["ndcg"] is None
    metrics = run["metrics"]["mine"]
    assert metrics["queries"] == 2
    assert metrics["ndcg"] == pytest.approx((1 / math.log2(3) + 1) / 2)
    assert metrics["mrr"] == pytest.approx(0.75)
    assert [(u["query"], u["memory_id"]) for u in run["unjudged"]] == [("alpha", corpus["m3"])]

    api.patch("/profiles/mine", {"k1": 0.5, "b": 0.1})
    _judge(editor, corpus["m3"], 3)
    again = api.get(f"/runs/{run['id']}").json()
    assert again == run
    second = api.post(
        "/runs", {"name": "second", "query_set": qs["id"], "profiles": ["mine"], "k": 3}
    ).json()
    assert second["profiles"][0]["version"] == 2 and second["profiles"][0]["k1"] == 0.5
    assert second["unjudged"] == []
    frozen = EvalRun.objects.get(pk=run["id"])
    with pytest.raises(ValueError, match="immutable"):
        frozen.save()

    cmp = api.get(f"/runs/compare?a={run['id']}&b={second['id']}").json()
    assert [c["label"] for c in cmp["columns"]] == ["A · mine", "B · mine"]
    alpha_row = next(r for r in cmp["queries"] if r["query"] == "alpha")
    assert alpha_row["delta"] == pytest.approx(alpha_row["ndcg"][1] - alpha_row["ndcg"][0])


def test_run_compare_means_cover_only_the_queries_judged_in_both_runs(api, editor, corpus):
    """Grading a second query between two runs of the same profile adds nothing to compare:
    the mean delta is over the queries judged in both (here only "alpha", unchanged, so 0),
    and it equals the mean of the per-query deltas."""
    qs = api.post(
        "/query-sets", {"name": "grow", "user_id": "u-lab", "queries": ["alpha", "omega"]}
    ).json()
    _judge(editor, corpus["m2"], 3)
    first = api.post("/runs", {"name": "a", "query_set": qs["id"], "profiles": ["bm25"], "k": 3})
    _judge(editor, corpus["m4"], 3, query="omega")
    second = api.post("/runs", {"name": "b", "query_set": qs["id"], "profiles": ["bm25"], "k": 3})
    a, b = first.json(), second.json()
    assert a["metrics"]["bm25"]["queries"] == 1 and b["metrics"]["bm25"]["queries"] == 2
    assert b["metrics"]["bm25"]["ndcg"] != a["metrics"]["bm25"]["ndcg"]

    cmp = api.get(f"/runs/compare?a={a['id']}&b={b['id']}").json()
    deltas = {r["query"]: r["deltas"]["bm25"] for r in cmp["queries"]}
    assert deltas == {"alpha": 0.0, "omega": None}
    mean = cmp["mean_deltas"]["bm25"]
    assert mean["queries"] == 1
    assert mean["ndcg"] == pytest.approx(0.0) and mean["mrr"] == pytest.approx(0.0)


def test_a_run_can_use_one_reviewers_grades(api, admin_api, editor, admin_user, corpus):
    qs = api.post("/query-sets", {"name": "one", "user_id": "u-lab", "queries": ["alpha"]}).json()
    _judge(editor, corpus["m1"], 3)
    _judge(admin_user, corpus["m1"], 0)
    _judge(admin_user, corpus["m3"], 3)
    mine = api.post(
        "/runs",
        {"name": "eddie", "query_set": qs["id"], "profiles": ["bm25"], "k": 3, "reviewer": "eddie"},
    ).json()
    theirs = api.post(
        "/runs",
        {"name": "ada", "query_set": qs["id"], "profiles": ["bm25"], "k": 3, "reviewer": "ada"},
    ).json()
    assert mine["metrics"]["bm25"]["mrr"] == 1.0
    assert theirs["metrics"]["bm25"]["mrr"] == pytest.approx(1 / 3)


def test_run_and_query_set_rules(api, viewer_api, corpus):
    assert (
        viewer_api.post(
            "/query-sets", {"name": "x", "user_id": "u-lab", "queries": ["a"]}
        ).status_code
        == 403
    )
    resp = api.post("/query-sets", {"name": "x", "user_id": "u-lab", "queries": []})
    assert resp.status_code == 400 and error_of(resp)["field"] == "queries"
    qs = api.post("/query-sets", {"name": "x", "user_id": "u-lab", "queries": ["a"]}).json()
    resp = api.post("/runs", {"name": "r", "query_set": qs["id"], "profiles": ["nope"]})
    assert resp.status_code == 404 and error_of(resp)["field"] == "profiles"
    resp = api.post("/runs", {"name": "r", "query_set": 999, "profiles": ["bm25"]})
    assert resp.status_code == 404 and error_of(resp)["field"] == "query_set"
    assert (
        viewer_api.post(
            "/runs", {"name": "r", "query_set": qs["id"], "profiles": ["bm25"]}
        ).status_code
        == 403
    )
    assert api.get("/runs/999").status_code == 404
    resp = api.patch(f"/query-sets/{qs['id']}", {"queries": ["b", "c"]})
    assert resp.status_code == 200 and resp.json()["queries"] == ["b", "c"]


def test_query_set_notes_in_the_api(api, viewer_api, admin_api, corpus):
    resp = api.post("/query-sets", {"name": "n", "user_id": "u-lab",
                                    "queries": ["alpha  beta", "omega"],
                                    "notes": {"alpha beta": "  the first one  ", "omega": ""}})
    assert resp.status_code == 201
    qs = resp.json()
    assert qs["queries"] == ["alpha beta", "omega"] and qs["notes"] == {"alpha beta": "the first one"}
    assert viewer_api.get(f"/query-sets/{qs['id']}").json()["notes"] == {"alpha beta": "the first one"}
    listed = viewer_api.get("/query-sets").json()["query_sets"]
    assert [q["notes"] for q in listed] == [{"alpha beta": "the first one"}]
    # A set without notes answers an empty object (older sets, created without them).
    bare = api.post("/query-sets", {"name": "bare", "user_id": "u-lab", "queries": ["a"]}).json()
    assert bare["notes"] == {}
    # PATCH notes replaces them all; PATCH queries drops the notes of removed queries.
    resp = api.patch(f"/query-sets/{qs['id']}", {"notes": {"omega": "last"}})
    assert resp.status_code == 200 and resp.json()["notes"] == {"omega": "last"}
    resp = api.patch(f"/query-sets/{qs['id']}", {"queries": ["alpha beta"]})
    assert resp.json()["notes"] == {} and resp.json()["queries"] == ["alpha beta"]
    resp = api.patch(f"/query-sets/{qs['id']}", {"queries": ["x", "y"], "notes": {"y": "why"}})
    assert resp.status_code == 200 and resp.json()["notes"] == {"y": "why"}
    # Errors name the field.
    resp = api.patch(f"/query-sets/{qs['id']}", {"notes": {"nope": "x"}})
    assert resp.status_code == 400 and error_of(resp)["field"] == "notes"
    assert "not one of the set's queries" in error_of(resp)["message"]
    resp = api.patch(f"/query-sets/{qs['id']}", {"notes": {"y": "x" * 2001}})
    assert resp.status_code == 400 and error_of(resp)["field"] == "notes.y"
    assert "at most 2000 characters" in error_of(resp)["message"]
    resp = api.patch(f"/query-sets/{qs['id']}", {"notes": {"y": "bell\u0007"}})
    assert resp.status_code == 400 and error_of(resp)["field"] == "notes.y"
    resp = api.patch(f"/query-sets/{qs['id']}", {"notes": ["y"]})
    assert resp.status_code == 400
    resp = api.post("/query-sets", {"name": "m", "user_id": "u-lab", "queries": ["a"],
                                    "notes": {"b": "x"}})
    assert resp.status_code == 400 and error_of(resp)["field"] == "notes"
    # Writing needs the set's creator or an admin; viewers read.
    assert viewer_api.patch(f"/query-sets/{qs['id']}", {"notes": {}}).status_code == 403
    resp = admin_api.patch(f"/query-sets/{qs['id']}", {"notes": {"x": "by ada"}})
    assert resp.status_code == 200 and resp.json()["notes"] == {"x": "by ada"}
    resp = api.patch(f"/query-sets/{qs['id']}", {"notes": {"x": "é" * 2000}})
    assert len(resp.json()["notes"]["x"]) == 2000


def test_compare_lists_reports_moves_and_overlap():
    out = lab_evaluation.compare_lists(["a", "b", "c", "d"], ["b", "a", "e", "c"], 4)
    assert out["moves"] == {
        "b": {"kind": "up", "n": 1},
        "a": {"kind": "down", "n": 1},
        "e": {"kind": "new", "n": 0},
        "c": {"kind": "down", "n": 1},
    }
    assert out["dropped"] == ["d"] and out["shared"] == 3
    assert out["jaccard"] == pytest.approx(3 / 5)
    same = lab_evaluation.compare_lists(["a", "b"], ["a", "b"], 2)
    assert same["rbo"] == pytest.approx(1.0) and same["moves"]["a"]["kind"] == "same"


LONE_SURROGATE = "\\ud800"  # a valid JSON escape that no UTF-8 text can hold


@pytest.mark.parametrize(
    ("method", "path", "template", "field"),
    [
        ("post", "/profiles", '{"name": "X"}', "name"),
        (
            "post",
            "/judgments",
            '{"user_id": "u", "query": "X", "memory_id": "m", "grade": 1}',
            "query",
        ),
        ("post", "/query-sets", '{"name": "X", "user_id": "u", "queries": ["a"]}', "name"),
        ("post", "/query-sets", '{"name": "n", "user_id": "u", "queries": ["X"]}', "queries.0"),
        (
            "post",
            "/query-sets",
            '{"name": "n", "user_id": "u", "queries": ["a"], "notes": {"a": "X"}}',
            "notes.a",
        ),
        (
            "post",
            "/evaluate",
            '{"profile": "bm25", "k": 3, "queries": [{"user_id": "u", "query": "X", '
            '"relevant": []}]}',
            "queries.0.query",
        ),
        ("post", "/runs", '{"name": "X", "query_set": 1, "profiles": ["bm25"]}', "name"),
    ],
)
def test_lone_surrogates_are_a_400(admin_api, method, path, template, field):
    resp = admin_api.call(method, path, template.replace("X", LONE_SURROGATE + "x"))
    assert resp.status_code == 400 and error_of(resp)["field"] == field


def test_krippendorffs_alpha_matches_the_published_interval_example():
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders, 12 units
    with missing values; interval alpha = 0.849 (the last unit, coded once, is unpairable)."""
    units = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
             [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5], [1, 1], [3]]
    assert agreement.krippendorff_alpha_interval(units) == pytest.approx(0.849, abs=5e-4)
    assert agreement.krippendorff_alpha_interval([[2, 2], [3, 3]]) == 1.0
    assert agreement.krippendorff_alpha_interval([[2, 2], [2, 2]]) is None  # no variation
    assert agreement.krippendorff_alpha_interval([[1]]) is None


def test_quadratic_weighted_kappa_counts_a_disagreement_by_its_squared_distance():
    # By hand: observed 1/36, expected 48/144, so kappa = 1 - (1/36) / (1/3) = 11/12.
    assert agreement.cohen_kappa_quadratic([(0, 0), (1, 1), (2, 3), (3, 3)]) == pytest.approx(
        11 / 12
    )
    near = agreement.cohen_kappa_quadratic([(0, 0), (3, 3), (2, 3), (1, 1)])
    far = agreement.cohen_kappa_quadratic([(0, 0), (3, 3), (0, 3), (1, 1)])
    assert far < near
    assert agreement.cohen_kappa_quadratic([(0, 3), (3, 0)]) == -1.0
    assert agreement.cohen_kappa_quadratic([]) is None
    assert agreement.cohen_kappa_quadratic([(2, 2), (2, 2)]) is None
    with pytest.raises(ValueError):
        agreement.cohen_kappa_quadratic([(4, 0)])
