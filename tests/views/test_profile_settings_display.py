"""Profile tables show every setting with a readable label; the stored names and index field
ids (``c``, ``s``, ``xs``) stay as they are in the database and the API (display only)."""

import pytest

from lab import query_sets as lab_query_sets
from lab import runs as lab_runs
from lab.settings_display import LABELS
from memories import services
from search import profile_services
from tests.conftest import ApiClient
from tests.views.conftest import tags, text

pytestmark = pytest.mark.django_db


def settings_shown(html: str, within: str = "") -> set[str]:
    return {a["data-setting"] for t, a in tags(html) if "data-setting" in a}


@pytest.fixture
def context_profile(editor):
    return profile_services.profile_create(
        actor=editor,
        name="turns",
        ranker="bm25",
        context=True,
        stemming=True,
        synonyms=True,
        temporal="boost",
        w_time=0.5,
        w_semantic=0.2,
        recency_from="accessed_at",
    )


def test_the_profiles_table_shows_every_setting(viewer_client, context_profile):
    body = text(viewer_client.get("/lab/profiles/"))
    assert settings_shown(body) == set(profile_services.SETTINGS) | {"field"}
    row = body[body.index('data-profile="turns"') :]
    row = row[: row.index("</tr>")]
    for label, value in [
        ("neighbouring turns (context field)", "on"),
        ("time in the query", "boosts"),
        ("time match", "0.50"),
        ("semantic", "0.20"),
        ("counted from", "last access"),
        ("index field", "content and neighbouring turns, stemmed"),
    ]:
        assert f"{label}&nbsp;<b>{value}</b>" in row
    assert "<b>xs</b>" not in body and ">c<" not in row
    for label in ("Ranker", "BM25", "Weights", "Recency", "Text analysis", "Matching"):
        assert f"<th>{label}</th>" in body and f'data-label="{label}"' in body


def test_profile_and_compare_pages_show_every_setting(viewer_client, context_profile):
    page = text(viewer_client.get("/lab/profiles/turns/"))
    assert settings_shown(page) >= set(profile_services.SETTINGS)
    for name in profile_services.SETTINGS:
        assert LABELS[name] in page
    compare = text(viewer_client.get("/search/compare/", {"a": "bm25", "b": "turns"}))
    assert settings_shown(compare) >= set(profile_services.SETTINGS)


def test_a_run_shows_readable_fields_and_the_api_keeps_the_ids(
    viewer_client, editor, context_profile
):
    services.memory_create(user_id="u-run", content="the deploy key lives in the vault")
    qs = lab_query_sets.queryset_create(
        actor=editor, name="q", user_id="u-run", queries=["deploy key"]
    )
    run = lab_runs.run_create(actor=editor, name="r", query_set=qs, profiles=["bm25", "turns"])
    page = text(viewer_client.get(f"/lab/runs/{run.pk}/"))
    assert "u-run · content and neighbouring turns, stemmed" in page
    assert "u-run · content</dt>" in page and "field xs" not in page
    assert settings_shown(page) >= set(profile_services.SETTINGS)
    api = ApiClient(editor).get(f"/runs/{run.pk}").json()
    assert set(api["index_stats"]["u-run"]) == {"c", "xs"}
    assert [p["field"] for p in api["profiles"]] == ["c", "xs"]
