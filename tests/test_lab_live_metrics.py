"""The lab's figures that move: nDCG@k / P@k of the compare page's query, live as grades come
in (Quepid's habit), and the run comparison's delta, which compares one profile with itself."""

import math

import pytest

from lab import judgments as lab_judgments
from lab import query_sets as lab_query_sets
from lab import runs as lab_runs
from memories import services
from tests import test_lab_pages
from tests.test_lab_pages import column_ids
from tests.views.conftest import HX, tags, text

# The compare page's fixture (two notes whose order flips between bm25 and keyword).
flip = test_lab_pages.flip

pytestmark = pytest.mark.django_db

STATE = {"user_id": "u-flip", "q": "deploy", "a": "bm25", "b": "keyword", "k": "10"}


def figures(html: str) -> dict[str, dict[str, str]]:
    """``{side: {metric: value}}`` read from the ``#live-metrics-<side>`` paragraphs."""
    out, side = {}, None
    for tag, a in tags(html):
        if tag == "p" and a.get("id", "").startswith("live-metrics-"):
            side = a["id"].rsplit("-", 1)[1]
            out[side] = {}
        elif tag == "b" and "data-metric" in a and side:
            out[side][a["data-metric"]] = None  # filled below
    for side in out:
        for metric in ("ndcg", "precision"):
            marker = f'id="live-metrics-{side}"'
            block = html[html.index(marker) :]
            block = block[: block.index("</p>")]
            key = f'data-metric="{metric}">'
            if key in block:
                out[side][metric] = block.split(key, 1)[1].split("<", 1)[0]
    return out


def grade_post(client, flip, memory_id, grade, body):
    """A grade as htmx sends it from the compare page: the form plus #live-rankings."""
    return client.post(
        "/lab/judgments/",
        {
            "user_id": "u-flip",
            "q": "deploy",
            "memory_id": memory_id,
            "grade": str(grade),
            "next": "/search/compare/",
            "k": "10",
            "ranked_a": column_ids(body, "a"),
            "ranked_b": column_ids(body, "b"),
        },
        headers=HX,
    )


def test_it_shows_ndcg_and_precision_of_the_query_per_side(editor_client, flip):
    page = text(editor_client.get("/search/compare/", STATE))
    assert "appear once a result is graded relevant" in page  # nothing graded yet
    assert column_ids(page, "a") == [flip["noisy"], flip["vital"]]
    assert column_ids(page, "b") == [flip["vital"], flip["noisy"]]
    # #live-rankings carries both rankings for the grade forms (hx-include).
    inputs = [(a["name"], a.get("value")) for t, a in tags(page) if t == "input" and "name" in a]
    assert ("ranked_a", flip["noisy"]) in inputs and ("ranked_b", flip["vital"]) in inputs
    assert 'hx-include="#live-rankings"' in page

    resp = grade_post(editor_client, flip, flip["vital"], 3, page)
    html = text(resp)
    assert resp.status_code == 200
    assert 'id="live-metrics-a" aria-live="polite" hx-swap-oob="true"' in html
    # A: vital at rank 2 → nDCG = (7 / log2 3) / 7; B: vital first → 1. P@10 = 1/10 both.
    got = figures(html)
    assert got["a"] == {"ndcg": f"{1 / math.log2(3):.3f}", "precision": "0.100"}
    assert got["b"] == {"ndcg": "1.000", "precision": "0.100"}

    # The next grade moves the figures again, on both sides (a 2 for noisy, ideal = 3, 2).
    html = text(grade_post(editor_client, flip, flip["noisy"], 2, page))
    ideal = 7 + 3 / math.log2(3)
    got = figures(html)
    assert got["a"]["ndcg"] == f"{(3 + 7 / math.log2(3)) / ideal:.3f}"
    assert got["b"]["ndcg"] == "1.000" and got["a"]["precision"] == "0.200"
    # Without JavaScript the page reloads and shows the same figures.
    assert figures(text(editor_client.get("/search/compare/", STATE))) == got


def test_the_figures_use_only_live_memories(editor_client, editor, flip):
    lab_judgments.judgment_set(
        actor=editor, user_id="u-flip", query="deploy", memory_id=flip["other"], grade=3
    )
    page = text(editor_client.get("/search/compare/", STATE))
    # "other" is relevant but never retrieved: the ideal ranking holds it, so nDCG is 0.
    assert figures(page)["a"] == {"ndcg": "0.000", "precision": "0.000"}
    services.memory_forget(memory_id=flip["other"], reason="test")
    page = text(editor_client.get("/search/compare/", STATE))
    assert "appear once a result is graded relevant" in page  # a forgotten memory counts not


def test_a_grade_without_rankings_still_counts(editor_client, flip):
    resp = editor_client.post(
        "/lab/judgments/",
        {
            "user_id": "u-flip",
            "q": "deploy",
            "memory_id": flip["vital"],
            "grade": "2",
            "k": "10",
            "ranked_a": "not-an-id",
        },
        headers=HX,
    )
    assert resp.status_code == 200 and "live-metrics" not in text(resp)
    assert lab_judgments.judgment_grades(user_id="u-flip", query="deploy") == {flip["vital"]: 2}


# --- run comparison -----------------------------------------------------------------------------


def _two_runs(editor, flip, profiles_a, profiles_b):
    qs = lab_query_sets.queryset_create(
        actor=editor, name="deploys", user_id="u-flip", queries=["deploy"]
    )
    lab_judgments.judgment_set(
        actor=editor, user_id="u-flip", query="deploy", memory_id=flip["vital"], grade=3
    )
    a = lab_runs.run_create(actor=editor, name="a", query_set=qs, profiles=profiles_a)
    b = lab_runs.run_create(actor=editor, name="b", query_set=qs, profiles=profiles_b)
    return a, b


def test_the_run_delta_compares_the_same_profile(editor_client, editor, flip):
    """Both runs evaluate bm25 and keyword on the same data: every same-profile delta is 0;
    the old "last column minus first" compared B's keyword with A's bm25."""
    a, b = _two_runs(editor, flip, ["bm25", "keyword"], ["keyword", "bm25"])
    cmp = lab_runs.run_compare(a, b)
    assert cmp["shared"] == ["bm25", "keyword"]
    row = cmp["queries"][0]
    assert row["ndcg"][0] != row["ndcg"][1]  # the two profiles do differ on this query
    assert row["deltas"] == {"bm25": 0.0, "keyword": 0.0} and row["delta"] == 0.0
    assert cmp["mean_deltas"]["keyword"]["mrr"] == 0.0
    page = text(editor_client.get("/lab/runs/compare/", {"a": a.pk, "b": b.pk}))
    assert "Δ bm25</th>" in page and "Δ keyword</th>" in page and "last − first" not in page
    assert page.count('data-delta="bm25">0</td>') == 1
    assert 'class="delta-row" data-profile="keyword"' in page


def test_runs_that_share_no_profile_show_no_delta(editor_client, editor, flip):
    a, b = _two_runs(editor, flip, ["bm25"], ["keyword"])
    cmp = lab_runs.run_compare(a, b)
    assert cmp["shared"] == [] and cmp["queries"][0]["delta"] is None
    assert cmp["queries"][0]["deltas"] == {}
    page = text(editor_client.get("/lab/runs/compare/", {"a": a.pk, "b": b.pk}))
    assert "no-shared-profile" in page and "Δ bm25" not in page
