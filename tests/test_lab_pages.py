"""Ranking lab pages: the compare page (two profiles that must differ, rank moves, overlap,
the slider round trip, explain, grading), and the profiles, query sets and runs pages."""

import contextlib
import csv
import datetime as dt
import io
import re
import socket
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from lab import explain as lab_explain
from lab import judgments as lab_judgments
from lab import query_sets as lab_query_sets
from lab.models import EvalRun, Judgment
from memories import services, store
from search import agreement
from search.models import RankingProfile
from tests.conftest import login
from tests.views.conftest import HX, ids, tags, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def flip(builtins):
    """For "deploy": ``noisy`` has the higher BM25 (tf 3) but importance 0.05; ``vital`` one
    mention and importance 0.95. Both are a week old, so recency is equal: importance alone
    flips the order under ``keyword`` (0.5 overlap + 0.3 recency + 0.2 importance)."""
    week_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=7)
    noisy, _ = services.memory_create(
        user_id="u-flip", content="deploy deploy deploy notes", importance=0.05, created_at=week_ago
    )
    vital, _ = services.memory_create(
        user_id="u-flip",
        content="the deploy key lives in the vault, rotate it monthly",
        importance=0.95,
        created_at=week_ago,
    )
    other, _ = services.memory_create(
        user_id="u-flip", content="lunch is at noon", importance=0.5, created_at=week_ago
    )
    return {"noisy": noisy.memory_id, "vital": vital.memory_id, "other": other.memory_id}


def column_ids(body, side: str) -> list[str]:
    """Memory ids of one column's result rows, in rank order."""
    out, inside = [], None
    for tag, a in tags(body):
        if tag == "ol" and "data-side" in a:
            inside = a["data-side"]
        elif tag == "li" and "data-gradable" in a and inside == side:
            out.append(a["data-memory-id"])
    return out


def form_inputs(body, form_id: str) -> dict[str, str]:
    """Name -> value of the inputs inside ``<form id=form_id>`` (first occurrence)."""
    out, inside = {}, False
    for tag, a in tags(body):
        if tag == "form":
            inside = a.get("id") == form_id
        elif inside and tag == "input" and "name" in a:
            out.setdefault(a["name"], a.get("value", ""))
    return out


# --- compare ------------------------------------------------------------------------------------


def test_the_compare_page_shows_two_profiles_that_differ(viewer_client, flip):
    resp = viewer_client.get(
        "/search/compare/", {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword"}
    )
    body = text(resp)
    assert resp.status_code == 200 and "<html" in body
    assert column_ids(body, "a") == [flip["noisy"], flip["vital"]]
    assert column_ids(body, "b") == [flip["vital"], flip["noisy"]]
    # Rank moves in B, relative to A.
    assert 'title="up 1 from A">▲ 1<' in body and 'title="down 1 from A">▼ 1<' in body
    # Same two results: Jaccard 1; order swapped, so RBO below 1.
    assert re.search(r'id="jaccard">1\.00<', body)
    rbo = float(re.search(r'id="rbo">([0-9.]+)<', body).group(1))
    assert 0 < rbo < 1
    # Every result links to its memory, has a stacked score bar and an explain link.
    for memory_id in (flip["noisy"], flip["vital"]):
        assert body.count(f'href="/memories/{memory_id}/"') == 2
    assert body.count('<svg class="stack"') == 4 and "score-chart" in ids(body)
    assert {"compare-form", "tune-form", "results", "column-a", "column-b"} <= ids(body)


def test_keyword_bars_show_weight_times_component(viewer_client, flip):
    resp = viewer_client.get(
        "/search/compare/", {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword"}
    )
    body = text(resp)
    # keyword: relevance part 0.5 × overlap 1.0, importance part 0.2 × 0.95 (bar segments).
    assert body.count("<title>relevance 0.5000</title>") == 2
    assert "<title>importance 0.1900</title>" in body and "<title>recency 0." in body


def test_htmx_gets_only_the_results_fragment_and_the_url_is_kept(viewer_client, flip):
    resp = viewer_client.get(
        "/search/compare/",
        {
            "user_id": "u-flip",
            "q": "deploy",
            "a": "bm25",
            "b": "bm25",
            "w_rel": "0.2",
            "w_imp": "0.8",
        },
        headers=HX,
    )
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert body.lstrip().startswith('<div id="results"') and "HX-Request" in resp["Vary"]
    assert column_ids(body, "b") == [flip["vital"], flip["noisy"]]


def test_slider_round_trip(editor_client, flip):
    """URL parameters tune B (unsaved); the right column reflects them; saving creates a
    profile with exactly those settings and the comparison continues with it."""
    params = {
        "user_id": "u-flip",
        "q": "deploy",
        "a": "bm25",
        "b": "bm25",
        "k": "5",
        "w_rel": "0.2",
        "w_rec": "0",
        "w_imp": "0.8",
        "half_life": "48",
        "k1": "1.5",
        "bm25_b": "0.5",
        "stemming": "on",
        "match_mode": "any",
    }
    resp = editor_client.get("/search/compare/", params)
    body = text(resp)
    assert resp.status_code == 200 and "tuned-b" in ids(body) and "tuned-a" not in ids(body)
    assert column_ids(body, "a") == [flip["noisy"], flip["vital"]]
    assert column_ids(body, "b") == [flip["vital"], flip["noisy"]]
    assert re.search(r'id="b-w-rel">0\.20<', body) and re.search(r'id="b-w-imp">0\.80<', body)
    assert "half-life <b>48 h</b>" in body and "k1 <b>1.50</b>" in body
    assert "stemming <b>on</b>" in body and "bm25 (tuned)" in body
    sliders = {
        a["name"]: a["value"]
        for t, a in tags(body)
        if t == "input" and a.get("type") == "range" and not a["name"].startswith("a_")
    }
    assert sliders == {
        "w_rel": "0.2",
        "w_rec": "0",
        "w_imp": "0.8",
        "half_life": "48",
        "k1": "1.5",
        "bm25_b": "0.5",
    }
    hidden = form_inputs(body, "save-form-b")
    assert hidden["w_imp"] == "0.8" and hidden["b"] == "bm25" and hidden["stemming"] == "on"
    resp = editor_client.post("/search/compare/save/", {**hidden, "name": "important-first"})
    assert resp.status_code == 302
    target = parse_qs(urlsplit(resp["Location"]).query)
    assert target["b"] == ["important-first"] and "w_imp" not in target
    saved = RankingProfile.objects.get(name="important-first")
    assert (saved.w_relevance, saved.w_recency, saved.w_importance) == (0.2, 0.0, 0.8)
    assert (saved.half_life_hours, saved.k1, saved.b, saved.stemming) == (48, 1.5, 0.5, True)
    assert saved.ranker == "bm25" and saved.created_by == "eddie" and saved.history.count() == 1
    follow = editor_client.get(resp["Location"])
    assert column_ids(text(follow), "b") == [flip["vital"], flip["noisy"]]
    assert "Saved profile important-first." in text(follow)


def test_profile_a_is_tuned_by_its_own_sliders_and_saved_from_its_side(editor_client, flip):
    """A's sliders (``a_`` parameters) tune A as B's tune B: A re-ranks, B stays as saved,
    the explain link and the save form carry A's settings, and saving A puts the new
    profile on side A while B keeps its sliders."""
    params = {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "bm25",
              "a_w_rel": "0.2", "a_w_imp": "0.8", "w_rec": "0.1"}
    body = text(editor_client.get("/search/compare/", params))
    assert {"tuned-a", "tuned-b"} <= ids(body)
    assert column_ids(body, "a") == [flip["vital"], flip["noisy"]]
    assert re.search(r'id="a-w-imp">0\.80<', body) and re.search(r'id="b-w-imp">0\.00<', body)
    ranges = {a["name"] for t, a in tags(body) if t == "input" and a.get("type") == "range"}
    assert {"a_w_rel", "a_k1", "w_rel", "k1"} <= ranges
    hidden = form_inputs(body, "save-form-a")
    assert hidden["side"] == "a" and hidden["a_w_imp"] == "0.8" and hidden["w_rec"] == "0.1"
    resp = editor_client.post("/search/compare/save/", {**hidden, "name": "a-tuned"})
    target = parse_qs(urlsplit(resp["Location"]).query)
    assert target["a"] == ["a-tuned"] and "a_w_imp" not in target and target["w_rec"] == ["0.1"]
    saved = RankingProfile.objects.get(name="a-tuned")
    assert (saved.w_relevance, saved.w_importance) == (0.2, 0.8)
    explain = text(editor_client.get("/search/compare/explain/",
                                     {**params, "side": "a", "memory_id": flip["vital"]}))
    assert "bm25 (tuned)" in explain


# --- three and four profiles --------------------------------------------------------------------

FOUR = {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword", "c": "bm25",
        "d": "keyword"}


def test_four_profiles_side_by_side_each_tunable(editor_client, flip):
    """C and D are columns as A and B: results, moves against A, live figures, sliders
    (``c_``, ``d_``), their own save form; the grades are shared (one widget per result,
    the same in every column)."""
    lab_judgments.judgment_set(actor=User.objects.get(username="eddie"), user_id="u-flip",
                               query="deploy", memory_id=flip["vital"], grade=3)
    resp = editor_client.get("/search/compare/", {**FOUR, "c_w_rel": "0.2", "c_w_imp": "0.8"})
    body = text(resp)
    assert resp.status_code == 200
    assert {f"column-{s}" for s in "abcd"} <= ids(body)
    assert {f"live-metrics-{s}" for s in "abcd"} <= ids(body)
    assert {"tuned-c", "c-vs-a", "d-vs-a", "save-form-c", "save-form-d"} <= ids(body)
    assert {"tuned-a", "tuned-b", "tuned-d"}.isdisjoint(ids(body))
    assert "add-profile" not in ids(body)  # four at most
    assert {"remove-a", "remove-b", "remove-c", "remove-d"} <= ids(body)
    assert 'class="lab-cols cols-4"' in body and 'class="lab-cols heads cols-4"' in body
    assert column_ids(body, "a") == [flip["noisy"], flip["vital"]]  # bm25
    assert column_ids(body, "c") == [flip["vital"], flip["noisy"]]  # bm25, importance-tuned
    assert column_ids(body, "d") == column_ids(body, "b")  # keyword
    assert re.search(r'id="c-w-imp">0\.80<', body) and re.search(r'id="d-w-imp">0\.20<', body)
    ranges = {a["name"] for t, a in tags(body) if t == "input" and a.get("type") == "range"}
    assert {"a_w_rel", "w_rel", "c_w_rel", "d_w_rel", "c_k1", "d_half_life"} <= ranges
    # The shared grade: the graded memory's widget is pressed in all four columns.
    assert body.count(f'data-memory-id="{flip["vital"]}"') >= 8  # 4 cards + 4 widgets
    pressed = re.findall(r'value="3" class="grade-btn grade-3" aria-pressed="true"', body)
    assert len(pressed) == 4
    # The grades answer every column's figures: #live-rankings names the four sides.
    live = form_inputs(body.replace('<div id="live-rankings" hidden>',
                                    '<form id="live">'), "live")
    assert live["sides"] == "a,b,c,d"
    assert body.count('name="ranked_d"') == len(column_ids(body, "d"))
    # The state (tune form, save forms) keeps C and D with C's sliders.
    hidden = form_inputs(body, "save-form-c")
    assert hidden["side"] == "c" and hidden["c"] == "bm25" and hidden["d"] == "keyword"
    assert hidden["c_w_imp"] == "0.8"
    resp = editor_client.post("/search/compare/save/", {**hidden, "name": "c-tuned"})
    target = parse_qs(urlsplit(resp["Location"]).query)
    assert target["c"] == ["c-tuned"] and target["d"] == ["keyword"] and "c_w_imp" not in target
    assert RankingProfile.objects.get(name="c-tuned").w_importance == 0.8
    # Explain a result of D; a side that is not compared is a 400.
    explain = editor_client.get("/search/compare/explain/",
                                {**FOUR, "side": "d", "memory_id": flip["vital"]})
    assert explain.status_code == 200
    three = {k: v for k, v in FOUR.items() if k != "d"}
    assert editor_client.get("/search/compare/explain/",
                             {**three, "side": "d", "memory_id": flip["vital"]}).status_code == 400


def test_three_profiles_and_the_add_and_remove_buttons(viewer_client, flip):
    two = {k: v for k, v in FOUR.items() if k not in ("c", "d")}
    body = text(viewer_client.get("/search/compare/", two))
    assert "column-c" not in ids(body) and "remove-a" not in ids(body)
    assert "+ Add profile C" in body
    # Add (a submit of the tune form, sliders included): the next side with the first
    # profile not compared yet; B's sliders are kept.
    resp = viewer_client.get("/search/compare/", {**two, "w_imp": "0.6", "add": "c"})
    assert resp.status_code == 302
    target = parse_qs(urlsplit(resp["Location"]).query)
    assert target["c"] not in (["bm25"], ["keyword"]) and target["w_imp"] == ["0.6"]
    body = text(viewer_client.get(resp["Location"]))
    assert {"column-a", "column-b", "column-c", "remove-c", "add-profile"} <= ids(body)
    assert "column-d" not in ids(body) and 'class="lab-cols cols-3"' in body
    assert "+ Add profile D" in body
    # Remove A of three: B becomes A and C becomes B, each with its sliders.
    three = {**two, "c": "bm25", "w_imp": "0.6", "c_w_rec": "0.3"}
    resp = viewer_client.get("/search/compare/", {**three, "remove": "a"})
    target = parse_qs(urlsplit(resp["Location"]).query)
    assert (target["a"], target["b"]) == (["keyword"], ["bm25"]) and "c" not in target
    assert target["a_w_imp"] == ["0.6"] and target["w_rec"] == ["0.3"]
    # Two stay two: removing one of two, or a side not compared, is ignored (the page).
    assert viewer_client.get("/search/compare/", {**two, "remove": "b"}).status_code == 200
    assert viewer_client.get("/search/compare/", {**three, "remove": "d"}).status_code == 200
    # D without C is the third column, C.
    body = text(viewer_client.get("/search/compare/", {**two, "d": "bm25"}))
    assert "column-c" in ids(body) and "column-d" not in ids(body)
    # An unknown profile for C is a form error.
    assert viewer_client.get("/search/compare/", {**two, "c": "nope"}).status_code == 400


def test_a_runs_judge_links_name_its_set_and_up_to_four_profiles(editor_client, editor, flip):
    from lab import runs as lab_runs

    names = list(RankingProfile.objects.values_list("name", flat=True))[:4]
    qs = lab_query_sets.queryset_create(actor=editor, name="d", user_id="u-flip",
                                        queries=["deploy"])
    run = lab_runs.run_create(actor=editor, name="four", query_set=qs, profiles=names, k=5)
    page = text(editor_client.get(f"/lab/runs/{run.pk}/"))
    link = re.search(r'href="(/search/compare/\?[^"]*)"', page).group(1).replace("&amp;", "&")
    query = parse_qs(urlsplit(link).query)
    assert [query[s][0] for s in "abcd"] == names and query["query_set"] == [str(qs.pk)]
    body = text(editor_client.get(link))
    assert {f"column-{s}" for s in "abcd"} <= ids(body) and "query-set-nav" in ids(body)


def test_a_grade_answers_the_figures_of_every_compared_side(editor_client, flip):
    body = text(editor_client.get("/search/compare/", FOUR))
    post = {"user_id": "u-flip", "q": "deploy", "memory_id": flip["vital"], "grade": "2",
            "next": "/search/compare/", "k": "10", "sides": "a,b,c,d",
            **{f"ranked_{s}": column_ids(body, s) for s in "abcd"}}
    resp = editor_client.post("/lab/judgments/", post, headers=HX)
    answer = text(resp)
    assert resp.status_code == 200
    assert all(f'id="live-metrics-{s}"' in answer for s in "abcd")
    # A malformed list of sides: the grade counts, no figures come back.
    resp = editor_client.post("/lab/judgments/", {**post, "sides": "a,e"}, headers=HX)
    assert resp.status_code == 200 and "live-metrics" not in text(resp)


@pytest.mark.parametrize("params", [{"a_w_rel": "2"}, {"a_match_mode": "some"}])
def test_a_bad_slider_of_a_is_a_400(viewer_client, flip, params):
    resp = viewer_client.get("/search/compare/", {"user_id": "u-flip", "q": "deploy", **params})
    assert resp.status_code == 400


def test_sliders_equal_to_the_profile_are_not_a_tuning(viewer_client, flip):
    resp = viewer_client.get(
        "/search/compare/",
        {
            "user_id": "u-flip",
            "q": "deploy",
            "a": "bm25",
            "b": "keyword",
            "w_rel": "0.5",
            "w_rec": "0.3",
            "w_imp": "0.2",
        },
    )
    assert "tuned-b" not in ids(resp.content)


def test_saving_needs_an_editor_and_a_free_name(viewer_client, editor_client, flip):
    state = {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword", "k": "10"}
    assert viewer_client.post("/search/compare/save/", {**state, "name": "x"}).status_code == 403
    resp = editor_client.post("/search/compare/save/", {**state, "name": "bm25"}, follow=True)
    assert "Not saved: a profile named &#x27;bm25&#x27; already exists" in text(resp)
    assert not RankingProfile.objects.filter(name="x").exists()


def test_the_compare_page_without_a_query_shows_the_form(viewer_client, builtins):
    resp = viewer_client.get("/search/compare/")
    body = text(resp)
    assert resp.status_code == 200 and "compare-hint" in ids(body)
    default = RankingProfile.objects.get(is_default=True).name
    assert f'<option value="{default}" selected>' in body


@pytest.mark.parametrize(
    "params", [{"k": "0"}, {"a": "nope"}, {"w_rel": "2"}, {"user_id": " x"}, {"half_life": "nan"}]
)
def test_bad_parameters_are_a_400(viewer_client, builtins, params):
    resp = viewer_client.get("/search/compare/", {"q": "x", "user_id": "u", **params})
    assert resp.status_code == 400 and "alert-error" in text(resp)


def test_compare_refuses_other_methods_and_users_without_a_role(viewer_client, builtins):
    assert viewer_client.post("/search/compare/").status_code == 405
    nobody = login(User.objects.create_user(username="nora", password="pw"))
    assert nobody.get("/search/compare/").status_code == 403
    anonymous = Client().get("/search/compare/?q=x")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_explain_shows_each_terms_bm25_parts(viewer_client, flip):
    state = {"user_id": "u-flip", "q": "deploy vault", "a": "bm25", "b": "keyword", "k": "10"}
    resp = viewer_client.get(
        "/search/compare/explain/", {**state, "side": "a", "memory_id": flip["vital"]}, headers=HX
    )
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    # "the deploy key lives in the vault, rotate it monthly": 6 tokens after stopwords.
    assert '<span class="chip">deploy</span>' in body and '<span class="chip">vault</span>' in body
    x = lab_explain.explain_hit(
        user_id="u-flip", query="deploy vault", memory_id=flip["vital"], profile="bm25"
    )
    assert [(t["term"], t["tf"], t["df"], t["dl"]) for t in x["terms"]] == [
        ("deploy", 1, 2, 6),
        ("vault", 1, 1, 6),
    ]
    for t in x["terms"]:  # idf × tf part is exactly what the ranking used
        assert t["idf"] * t["tf_part"] == pytest.approx(t["contribution"])
    assert x["n_docs"] == 3 and x["avgdl"] == pytest.approx((4 + 6 + 2) / 3)
    keyword = viewer_client.get(
        "/search/compare/explain/", {**state, "side": "b", "memory_id": flip["vital"]}
    )
    kbody = text(keyword)
    assert keyword.status_code == 200 and "<html" in kbody and "half-life 168 h" in kbody
    missing = viewer_client.get(
        "/search/compare/explain/", {**state, "side": "a", "memory_id": flip["other"]}
    )
    assert missing.status_code == 404


# --- grading from the compare page ----------------------------------------------------------


def test_grades_are_recorded_per_reviewer_and_shown(editor_client, admin_role_client, flip):
    body = {
        "user_id": "u-flip",
        "q": "deploy  ",
        "memory_id": flip["vital"],
        "grade": "3",
        "next": "/search/compare/?user_id=u-flip&q=deploy",
    }
    resp = editor_client.post("/lab/judgments/", body, headers=HX)
    html = text(resp)
    assert resp.status_code == 200
    assert f"hx-swap-oob=\"innerHTML:.grade[data-memory-id='{flip['vital']}']\"" in html
    assert 'value="3" class="grade-btn grade-3" aria-pressed="true"' in html
    resp = admin_role_client.post("/lab/judgments/", {**body, "grade": "1"})  # no JS: redirect
    assert resp.status_code == 302 and resp["Location"] == body["next"]
    rows = Judgment.objects.order_by("reviewer").values_list("reviewer", "query", "grade")
    assert list(rows) == [("ada", "deploy", 1), ("eddie", "deploy", 3)]
    page = text(
        editor_client.get(
            "/search/compare/", {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword"}
        )
    )
    assert 'value="3" class="grade-btn grade-3" aria-pressed="true"' in page
    assert "ada <b>1</b>" in page


def test_viewers_cannot_grade(viewer_client, flip):
    resp = viewer_client.post(
        "/lab/judgments/",
        {"user_id": "u-flip", "q": "deploy", "memory_id": flip["vital"], "grade": "2"},
        headers=HX,
    )
    assert resp.status_code == 403 and Judgment.objects.count() == 0
    page = text(viewer_client.get("/search/compare/", {"user_id": "u-flip", "q": "deploy"}))
    assert "grade-btn" not in page


def test_a_bad_grade_is_refused(editor_client, flip):
    resp = editor_client.post(
        "/lab/judgments/",
        {"user_id": "u-flip", "q": "deploy", "memory_id": flip["vital"], "grade": "9"},
        headers=HX,
    )
    assert resp.status_code == 400 and "grade must be" in text(resp)


# --- profiles, query sets, runs pages ---------------------------------------------------------


def test_profile_pages_create_edit_and_version(editor_client, admin_role_client, builtins):
    resp = editor_client.get("/lab/profiles/")
    assert resp.status_code == 200 and "profiles" in ids(resp.content)
    form = {
        "name": "mine",
        "ranker": "bm25",
        "k1": "1.2",
        "b": "0.75",
        "w_relevance": "1",
        "w_recency": "0",
        "w_importance": "0",
        "half_life_hours": "720",
        "recency_from": "created_at",
        "match_mode": "any",
    }
    resp = editor_client.post("/lab/profiles/", form)
    assert resp.status_code == 302 and resp["Location"] == "/lab/profiles/mine/"
    resp = editor_client.post(
        "/lab/profiles/mine/", {**form, "w_relevance": "0.5", "w_recency": "0.5"}
    )
    assert resp.status_code == 302
    page = text(editor_client.get("/lab/profiles/mine/"))
    assert "version 2" in page and "versions" in ids(page)
    resp = editor_client.post("/lab/profiles/", {**form, "b": "3"})
    assert resp.status_code == 400
    assert editor_client.post("/lab/profiles/keyword/", form).status_code == 403
    assert editor_client.post("/lab/profiles/mine/delete/").status_code == 403
    assert admin_role_client.post("/lab/profiles/bm25/delete/").status_code == 302
    assert RankingProfile.objects.filter(name="bm25").exists()
    assert admin_role_client.post("/lab/profiles/mine/delete/").status_code == 302
    assert not RankingProfile.objects.filter(name="mine").exists()
    assert editor_client.get("/lab/profiles/nope/").status_code == 404


def test_query_set_run_and_run_compare_pages(editor_client, editor, flip):
    resp = editor_client.post(
        "/lab/query-sets/", {"name": "deploys", "user_id": "u-flip", "queries": "deploy\nlunch\n"}
    )
    assert resp.status_code == 302
    qs_url = resp["Location"]
    page = text(editor_client.get(qs_url))
    assert "compare &amp; judge" in page and "lunch" in page
    qs_id = int(qs_url.rstrip("/").rsplit("/", 1)[1])
    lab_judgments.judgment_set(
        actor=editor, user_id="u-flip", query="deploy", memory_id=flip["vital"], grade=3
    )
    run_form = {
        "name": "bm25 vs keyword",
        "query_set": qs_id,
        "profiles": ["bm25", "keyword"],
        "k": "10",
    }
    resp = editor_client.post("/lab/runs/", run_form)
    assert resp.status_code == 302
    run = EvalRun.objects.get()
    assert run.metrics["keyword"]["mrr"] == 1.0 and run.metrics["bm25"]["mrr"] == 0.5
    page = text(editor_client.get(resp["Location"]))
    assert {"metric-bars", "per-query", "unjudged", "index-stats"} <= ids(page)
    assert "judge →" in page and flip["noisy"] in page  # unjudged, to judge next
    editor_client.post("/lab/runs/", {**run_form, "name": "again"})
    a, b = EvalRun.objects.order_by("pk")
    page = text(editor_client.get("/lab/runs/compare/", {"a": a.pk, "b": b.pk}))
    assert {"compare-metrics", "compare-queries", "metric-bars"} <= ids(page)
    assert page.count("<rect") == 16  # 4 metrics × 4 (run, profile) columns
    assert "over 1 query judged in both" in page  # "deploy"; "lunch" has no relevant grade
    assert editor_client.get("/lab/runs/compare/", {"a": "999", "b": a.pk}).status_code == 400
    assert editor_client.get("/lab/runs/999/").status_code == 404
    assert editor_client.get("/lab/").status_code == 200
    judgments = editor_client.get("/lab/judgments/", {"reviewer": "eddie"})
    assert judgments.status_code == 200 and flip["vital"] in text(judgments)
    fragment = editor_client.get("/lab/judgments/", {"reviewer": "ada"}, headers=HX)
    assert "<html" not in text(fragment) and "No judgments match" in text(fragment)


# --- notes per query of a query set ----------------------------------------------------------


@pytest.fixture
def deploys(editor, flip):
    """A query set of eddie (an editor): deploy, lunch."""
    return lab_query_sets.queryset_create(
        actor=editor, name="deploys", user_id="u-flip", queries=["deploy", "lunch"]
    )


def test_an_editor_adds_edits_and_clears_a_note_without_javascript(editor_client, deploys):
    url = f"/lab/query-sets/{deploys.pk}/notes/"
    page = text(editor_client.get(f"/lab/query-sets/{deploys.pk}/"))
    assert {"note-1", "note-2", "note-input-1"} <= ids(page) and "Add a note" in page
    resp = editor_client.post(url, {"query": "deploy", "note": "  The deploy key's vault.\nNot the checklist.  "})
    assert resp.status_code == 302
    assert resp["Location"] == f"/lab/query-sets/{deploys.pk}/#note-1"
    deploys.refresh_from_db()
    assert deploys.notes == {"deploy": "The deploy key's vault.\nNot the checklist."}
    page = text(editor_client.get(resp["Location"]))
    assert "The deploy key&#x27;s vault.<br>Not the checklist." in page
    assert "note-text-1" in ids(page) and "Edit note" in page and "Note saved" in page
    # Edited: the same form with another text; then cleared with its Clear button.
    assert editor_client.post(url, {"query": "deploy", "note": "Only the vault"}).status_code == 302
    deploys.refresh_from_db()
    assert deploys.notes == {"deploy": "Only the vault"}
    resp = editor_client.post(url, {"query": "deploy", "note": "Only the vault", "clear": "1"})
    assert resp.status_code == 302
    deploys.refresh_from_db()
    assert deploys.notes == {}
    # A blank note clears as well (nothing to clear: still fine).
    assert editor_client.post(url, {"query": "lunch", "note": "   "}).status_code == 302


def test_a_note_with_htmx_is_swapped_in_place_with_its_errors(editor_client, deploys):
    url = f"/lab/query-sets/{deploys.pk}/notes/"
    resp = editor_client.post(url, {"query": "lunch", "note": "Noon, canteen"}, headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and "<html" not in body
    assert 'id="note-2"' in body and "Noon, canteen" in body and "Note saved." in body
    # Too long: 400, the block again with the error at the note and the draft kept.
    resp = editor_client.post(url, {"query": "lunch", "note": "x" * 2001}, headers=HX)
    body = text(resp)
    assert resp.status_code == 400 and "<html" not in body
    assert "note-error-2" in ids(body) and "at most 2000 characters" in body
    assert "x" * 2001 in body and "<details class=\"note-edit\" open>" in body
    deploys.refresh_from_db()
    assert deploys.notes == {"lunch": "Noon, canteen"}  # unchanged


def test_a_bad_note_without_javascript_is_shown_at_its_query(editor_client, deploys):
    url = f"/lab/query-sets/{deploys.pk}/notes/"
    resp = editor_client.post(url, {"query": "deploy", "note": "bad\x00note"})
    body = text(resp)
    assert resp.status_code == 400 and "<html" in body
    assert "note-error-1" in ids(body) and "NUL" in body
    assert "note-error-2" not in ids(body)
    # A query that is not in the set (the set changed meanwhile): nothing saved, said so.
    resp = editor_client.post(url, {"query": "dinner", "note": "x"}, follow=True)
    assert "not in query set" in text(resp)
    resp = editor_client.post(url, {"query": "dinner", "note": "x"}, headers=HX)
    assert resp.status_code == 400 and "not in query set" in text(resp)
    deploys.refresh_from_db()
    assert deploys.notes == {}
    assert editor_client.post("/lab/query-sets/999/notes/", {"query": "deploy"}).status_code == 404
    assert editor_client.get(url).status_code == 405


def test_viewers_read_notes_and_only_the_sets_editors_write_them(
    viewer_client, editor, deploys, admin_role_client
):
    lab_query_sets.queryset_note_set(actor=editor, pk=deploys.pk, query="deploy", note="vault")
    url = f"/lab/query-sets/{deploys.pk}/notes/"
    page = text(viewer_client.get(f"/lab/query-sets/{deploys.pk}/"))
    assert "vault" in page and "no note" in page and "note-input-1" not in ids(page)
    assert viewer_client.post(url, {"query": "deploy", "note": "x"}).status_code == 403
    other = User.objects.create_user("otto", password="x")
    other.groups.add(Group.objects.get(name="editor"))
    # Another editor reads but may not change eddie's set (as for its queries).
    page = text(login(other).get(f"/lab/query-sets/{deploys.pk}/"))
    assert "vault" in page and "note-input-1" not in ids(page)
    assert login(other).post(url, {"query": "deploy", "note": "x"}).status_code == 403
    # An admin may.
    assert admin_role_client.post(url, {"query": "deploy", "note": "by ada"}).status_code == 302
    deploys.refresh_from_db()
    assert deploys.notes == {"deploy": "by ada"}


def test_editing_the_queries_keeps_the_notes_of_the_queries_kept(editor_client, editor, deploys):
    lab_query_sets.queryset_note_set(actor=editor, pk=deploys.pk, query="deploy", note="vault")
    lab_query_sets.queryset_note_set(actor=editor, pk=deploys.pk, query="lunch", note="noon")
    resp = editor_client.post(
        f"/lab/query-sets/{deploys.pk}/",
        {"name": "deploys", "user_id": "u-flip", "queries": "deploy\nrollback\n"},
    )
    assert resp.status_code == 302
    deploys.refresh_from_db()
    assert deploys.notes == {"deploy": "vault"}  # lunch was removed: its note with it
    # Re-added: no note (a removed query's note is dropped, not kept aside).
    lab_query_sets.queryset_update(actor=editor, pk=deploys.pk, queries=["deploy", "lunch"])
    deploys.refresh_from_db()
    assert deploys.notes == {"deploy": "vault"}


def test_the_compare_page_shows_the_note_of_a_query_from_a_set(viewer_client, editor, deploys):
    lab_query_sets.queryset_note_set(actor=editor, pk=deploys.pk, query="deploy",
                                     note="The vault one")
    set_page = text(viewer_client.get(f"/lab/query-sets/{deploys.pk}/"))
    link = re.search(r'href="(/search/compare/\?[^"]*q=deploy[^"]*)"', set_page).group(1)
    link = link.replace("&amp;", "&")
    assert parse_qs(urlsplit(link).query)["query_set"] == [str(deploys.pk)]
    body = text(viewer_client.get(link))
    assert "query-note" in ids(body) and "The vault one" in body and "query 1 of 2" in body
    nxt = re.search(r'id="set-next" href="([^"]*)"|href="([^"]*)" id="set-next"', body)
    nxt = (nxt.group(1) or nxt.group(2)).replace("&amp;", "&")
    assert parse_qs(urlsplit(nxt).query)["q"] == ["lunch"]
    assert "set-prev" not in ids(body)
    # The next query has no note; its page says so and steps back.
    body = text(viewer_client.get(nxt))
    assert "query-note-none" in ids(body) and "query 2 of 2" in body and "set-prev" in ids(body)
    # The set travels with a slider's htmx answer (the note is in #results).
    fragment = text(viewer_client.get(link + "&w_imp=0.5", headers=HX))
    assert "<html" not in fragment and "The vault one" in fragment
    assert f"query_set={deploys.pk}" in fragment and "w_imp=0.5" in fragment  # set-next
    page = text(viewer_client.get(link))
    assert form_inputs(page, "tune-form")["query_set"] == str(deploys.pk)
    assert form_inputs(page, "compare-form")["query_set"] == str(deploys.pk)
    # A query outside the set, or no set: no note.
    body = text(viewer_client.get(link.replace("q=deploy", "q=vault")))
    assert "query-note" not in ids(body) and "not one of the set" in body
    body = text(viewer_client.get(link.replace(f"query_set={deploys.pk}", "query_set=999")))
    assert "query-set-nav" not in ids(body)


def test_a_run_past_its_time_limit_is_a_form_error_in_place(editor_client, editor, flip,
                                                            settings):
    qs = lab_query_sets.queryset_create(actor=editor, name="q", user_id="u-flip",
                                        queries=["deploy", "lunch"])
    settings.MEMORY_EVALUATION_SECONDS = 0
    resp = editor_client.post("/lab/runs/", {"name": "r", "query_set": qs.pk,
                                             "profiles": ["bm25"], "k": "5"})
    assert resp.status_code == 413
    page = text(resp)
    assert "stopped after 1 of 2 searches" in page and "MEMORY_EVALUATION_SECONDS" in page
    assert 'name="name"' in page and not EvalRun.objects.exists()  # the form, kept


def test_a_built_in_profile_page_shows_no_settings_inputs_and_offers_a_copy(
    admin_role_client, editor_client, builtins
):
    """A built-in profile cannot change its settings, so its page shows none as inputs
    (an admin keeps the default mark); "Copy to a new profile" creates an editable copy."""
    for client in (admin_role_client, editor_client):
        page = text(client.get("/lab/profiles/bm25/"))
        profile_form = form_inputs(page, "profile-form")
        assert not {"k1", "b", "w_relevance", "w_time", "w_semantic", "name"} & profile_form.keys()
        assert "built-in profile keeps its settings" in page
    assert "is_default" in form_inputs(text(admin_role_client.get("/lab/profiles/bm25/")),
                                       "profile-form")
    copy = form_inputs(text(editor_client.get("/lab/profiles/bm25/")), "copy-form")
    bm25 = RankingProfile.objects.get(name="bm25")
    assert copy["k1"] == str(bm25.k1) and copy["w_semantic"] == str(bm25.w_semantic)
    resp = editor_client.post("/lab/profiles/", {**copy, "name": "bm25-copy"})
    assert resp.status_code == 302 and resp["Location"] == "/lab/profiles/bm25-copy/"
    made = RankingProfile.objects.get(name="bm25-copy")
    assert not made.builtin and made.created_by == "eddie"
    assert {f: getattr(made, f) for f in ("k1", "b", "w_relevance", "stemming", "w_time")} == {
        f: getattr(bm25, f) for f in ("k1", "b", "w_relevance", "stemming", "w_time")
    }
    assert {"k1", "w_time"} <= form_inputs(text(editor_client.get(resp["Location"])),
                                            "profile-form").keys()


def test_the_profile_formula_names_every_weight(viewer_client, builtins):
    RankingProfile.objects.filter(name="keyword").update(w_time=0.75, w_semantic=0.25)
    page = text(viewer_client.get("/lab/profiles/keyword/"))
    formula = page.split('id="formula"', 1)[1].split("</p>", 1)[0]
    for part in ("relevance", "recency", "importance", "0.75", "0.25", "cosine"):
        assert part in formula, part
    listing = text(viewer_client.get("/lab/profiles/"))
    formula = listing.split('id="formula"', 1)[1].split("</p>", 1)[0]
    assert "w_time" in formula and "w_semantic" in formula


def test_viewers_read_the_lab_but_cannot_write(viewer_client, builtins):
    for url in (
        "/lab/",
        "/lab/profiles/",
        "/lab/query-sets/",
        "/lab/runs/",
        "/lab/judgments/",
        "/lab/profiles/bm25/",
    ):
        assert viewer_client.get(url).status_code == 200, url
    assert viewer_client.post("/lab/query-sets/", {"name": "x"}).status_code == 403
    assert viewer_client.post("/lab/runs/", {"name": "x"}).status_code == 403
    assert viewer_client.post("/lab/profiles/", {"name": "x"}).status_code == 403


@contextlib.contextmanager
def redis_down_ctx():
    """Point the hot store at a loopback port nobody listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    live = settings.REDIS_URL
    store._client.cache_clear()
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    try:
        yield
    finally:
        store._client.cache_clear()
        settings.REDIS_URL = live


def test_redis_down_is_a_clear_503_and_grading_still_works(editor_client, editor, flip):
    from tests.conftest import ApiClient

    api = ApiClient(editor)
    qs = lab_query_sets.queryset_create(actor=editor, name="q", user_id="u-flip", queries=["deploy"])
    state = {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword"}
    with redis_down_ctx():
        page = editor_client.get("/search/compare/", state)
        assert page.status_code == 503 and "unreachable" in text(page)
        explain = editor_client.get(
            "/search/compare/explain/", {**state, "side": "a", "memory_id": flip["vital"]}
        )
        assert explain.status_code == 503
        resp = api.post(
            "/evaluate",
            {
                "profile": "bm25",
                "k": 3,
                "queries": [{"user_id": "u-flip", "query": "deploy", "relevant": []}],
            },
        )
        assert resp.status_code == 503 and resp.json()["error"]["code"] == "unavailable"
        resp = api.post("/runs", {"name": "r", "query_set": qs.pk, "profiles": ["bm25"]})
        assert resp.status_code == 503 and not EvalRun.objects.exists()
        form = {"name": "r", "query_set": qs.pk, "profiles": ["bm25"], "k": "5"}
        assert editor_client.post("/lab/runs/", form).status_code == 503
        graded = editor_client.post(
            "/lab/judgments/", {**state, "memory_id": flip["vital"], "grade": "2"}, headers=HX
        )
        assert graded.status_code == 200 and Judgment.objects.count() == 1


def test_compare_query_count_is_pinned(editor_client, flip, django_assert_num_queries):
    """Session, user, role, profiles, the namespace's existence, judgments, the live gains
    of the query (nDCG@k / P@k per side), namespace hints, the navigation's open conflicts
    count, and each side's check of its hits against the database (search.pending):
    whatever the result count."""
    params = {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword"}
    editor_client.get("/search/compare/", params)
    with django_assert_num_queries(11):
        assert editor_client.get("/search/compare/", params).status_code == 200
    with django_assert_num_queries(9):  # the fragment has no namespace hints
        assert editor_client.get("/search/compare/", params, headers=HX).status_code == 200


# --- judgments: CSV export and import, rater agreement --------------------------------------


def _csv(resp) -> list[list[str]]:
    return list(csv.reader(io.StringIO(b"".join(resp.streaming_content).decode())))


def test_judgments_export_as_csv_with_the_pages_filters(viewer_client, editor, flip):
    lab_judgments.judgment_set(actor=editor, user_id="u-flip", query="deploy",
                               memory_id=flip["vital"], grade=3)
    lab_judgments.judgment_set(actor=editor, user_id="u-flip", query="lunch",
                               memory_id=flip["other"], grade=1)
    resp = viewer_client.get("/lab/judgments/export.csv")
    assert resp.status_code == 200 and resp["Content-Type"].startswith("text/csv")
    rows = _csv(resp)
    assert rows[0] == ["namespace", "query", "memory_id", "grade", "rater", "updated_at"]
    vital = Judgment.objects.get(memory_id=flip["vital"])
    assert rows[1] == ["u-flip", "deploy", flip["vital"], "3", "eddie",
                       vital.updated_at.isoformat()]
    assert len(rows) == 3
    only = _csv(viewer_client.get("/lab/judgments/export.csv", {"q": "lunch"}))
    assert [r[1] for r in only[1:]] == ["lunch"]
    page = text(viewer_client.get("/lab/judgments/", {"q": "lunch"}))
    assert 'href="/lab/judgments/export.csv?q=lunch"' in page


def test_a_csv_import_keeps_the_good_rows_and_names_each_bad_one(editor_client, editor, flip):
    """Line 3 has a grade of 5, line 4 an unknown memory, line 5 another rater (the editor
    is no admin): each is listed by line and column; lines 2 and 6 are recorded, line 6
    replacing the editor's earlier grade."""
    lab_judgments.judgment_set(actor=editor, user_id="u-flip", query="lunch",
                               memory_id=flip["other"], grade=0)
    body = (
        "namespace,query,memory_id,grade,rater,updated_at\n"
        f"u-flip,deploy,{flip['vital']},3,,2020-01-01T00:00:00\n"
        f"u-flip,deploy,{flip['noisy']},5,eddie,\n"
        "u-flip,deploy,mem_0000000000000000,1,eddie,\n"
        f"u-flip,deploy,{flip['noisy']},1,ada,\n"
        f"u-flip,  lunch ,{flip['other']},2,eddie,\n"
    )
    upload = SimpleUploadedFile("j.csv", body.encode(), content_type="text/csv")
    resp = editor_client.post("/lab/judgments/import/", {"file": upload})
    page = text(resp)
    assert resp.status_code == 200
    assert "Imported 1 new and 1 changed grade" in page and "3 rows refused" in page
    assert "line 3, grade: grade must be 0, 1, 2 or 3, not &#x27;5&#x27;" in page
    assert "line 4, memory_id: memory &#x27;mem_0000000000000000&#x27; not found" in page
    assert "line 5, rater: only an admin may import another rater" in page
    got = set(Judgment.objects.values_list("query", "memory_id", "grade", "reviewer"))
    assert got == {("deploy", flip["vital"], 3, "eddie"), ("lunch", flip["other"], 2, "eddie")}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("query,grade\nx,1\n", "missing: namespace, memory_id"),
        (None, "not UTF-8"),
    ],
)
def test_a_csv_that_cannot_be_read_is_a_form_error(editor_client, flip, body, message):
    data = b"\xff\xfe\x00bad" if body is None else body.encode()
    resp = editor_client.post("/lab/judgments/import/",
                              {"file": SimpleUploadedFile("j.csv", data)})
    assert resp.status_code == 400 and message in text(resp)
    assert not Judgment.objects.exists()


def test_importing_needs_an_editor(viewer_client, flip):
    upload = SimpleUploadedFile("j.csv", b"namespace,query,memory_id,grade\n")
    assert viewer_client.post("/lab/judgments/import/", {"file": upload}).status_code == 403
    assert "import-form" not in ids(text(viewer_client.get("/lab/judgments/")))


def test_an_admin_imports_other_raters_and_the_page_shows_their_agreement(
    admin_role_client, flip
):
    """Two raters: Cohen's kappa (quadratic weights) over the pairs both graded; a third
    rater: Krippendorff's alpha (interval) over the pairs two or more graded."""
    lines = ["namespace,query,memory_id,grade,rater"]
    # ada and bo: (3, 3), (0, 1), (2, 2); one pair only ada graded.
    for memory, a, b in (("vital", 3, 3), ("noisy", 0, 1), ("other", 2, 2)):
        lines += [f"u-flip,deploy,{flip[memory]},{a},ada", f"u-flip,deploy,{flip[memory]},{b},bo"]
    lines.append(f"u-flip,lunch,{flip['other']},1,ada")
    upload = SimpleUploadedFile("j.csv", "\n".join(lines).encode())
    page = text(admin_role_client.post("/lab/judgments/import/", {"file": upload}))
    assert "Imported 7 new" in page
    kappa = agreement.cohen_kappa_quadratic([(3, 3), (0, 1), (2, 2)])
    assert f"Cohen's kappa (quadratic weights) <b>{kappa:.3f}</b> over 3" in page
    upload = SimpleUploadedFile("j.csv", f"namespace,query,memory_id,grade,rater\n"
                                f"u-flip,deploy,{flip['vital']},2,cy\n".encode())
    page = text(admin_role_client.post("/lab/judgments/import/", {"file": upload}))
    alpha = agreement.krippendorff_alpha_interval([[3, 3, 2], [0, 1], [2, 2]])
    assert f"Krippendorff's alpha (interval) <b>{alpha:.3f}</b> over 3" in page
