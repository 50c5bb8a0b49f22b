"""``GET /index/terms``: the live index's statistics, document frequencies and postings of a
few terms of one field, equal to the field's statistics in Redis (tests/helpers.py
``stats``), to what an index built afresh from Redis answers, and to what the database alone
gives (the oracle's N and average length), after creates, an edit, a forget, a purge and a
reindex, for every field; its 400, 403 and 404."""

from urllib.parse import urlencode

import pytest

from accounts.tokens import token_create
from memories import services
from memories.models import Memory
from operations import reindex
from search import scoring
from search.index import fields as index_fields
from search.profiles import profile_default
from search.serving import feed
from tests.conftest import ApiClient
from tests.helpers import create, index_read, index_terms, oracle_scores, stats

pytestmark = pytest.mark.django_db

FIELDS = list(index_fields.ANALYZERS)


def from_database(user_id: str, field: str) -> dict[str, dict[str, int]]:
    """``{memory_id: {term: tf}}`` of the live memories as ``field`` analyses them, from the
    rows alone: what a rebuild would index."""
    analyzer = index_fields.ANALYZERS[field]
    docs = {m.memory_id: analyzer.term_frequencies(index_fields.field_text(field, m.content,
                                                                           m.context))
            for m in Memory.objects.filter(user_id=user_id, deleted_at__isnull=True)}
    return {k: v for k, v in docs.items() if v}


def check_field(api, field: str, terms: list[str], generation: int = 0) -> dict:
    """The endpoint's answer for ``terms`` of ``field``, checked against the statistics
    hash, an index built afresh from Redis and the database; returned."""
    got = index_terms(api, "u-a", *terms, field=field)
    docs = from_database("u-a", field)
    total = sum(sum(tf.values()) for tf in docs.values())
    assert got["N"] == len(docs) and got["total_len"] == total
    assert got["avgdl"] == pytest.approx(total / len(docs) if docs else 0.0, abs=1e-12)
    assert got["generation"] == generation
    keys = stats("u-a", field)
    assert (got["N"], got["total_len"]) == (keys["N"], keys["total_len"])
    assert got["avgdl"] == pytest.approx(keys["avgdl"], abs=1e-12)
    for term in terms:
        want = sorted(m for m, tf in docs.items() if term in tf)
        assert got["postings"][term] == want, (field, term)
        assert got["df"][term] == len(want)
    # The answer came from this process's serving index, caught up write by write; one
    # built afresh from Redis answers the same (incremental == rebuild).
    feed.clear()
    assert index_read("u-a", *terms, field=field) == got
    return got


def all_terms(field: str) -> list[str]:
    return sorted({t for tf in from_database("u-a", field).values() for t in tf})[:50]


def test_it_answers_the_live_index_of_every_field_through_every_write(admin_api):
    lunch = create("Team lunch is at Cafe Lumen on Fridays", conversation_id="office")
    lamps = create("Lumen lamps glow warmly in the lobby", conversation_id="office")
    run = create("On Fridays we run along the river", conversation_id="office")
    create("我明天要去杭州出差")
    for field in FIELDS:
        check_field(admin_api, field, all_terms(field) + ["absent"])
    got = index_terms(admin_api, "u-a", "lumen", "杭州", "absent", field="c")
    assert got["df"] == {"lumen": 2, "杭州": 1, "absent": 0}
    assert got["postings"]["lumen"] == sorted([lunch.memory_id, lamps.memory_id])
    # N and avgdl are what the oracle scores with: BM25 from them equals the oracle's.
    docs = from_database("u-a", "c")
    avgdl = got["avgdl"]
    for memory_id, score in oracle_scores("u-a", "lumen").items():
        tf = docs[memory_id]
        assert scoring.bm25(["lumen"], tf, sum(tf.values()), got["N"], got["df"], avgdl,
                            1.2, 0.75) == pytest.approx(score, abs=1e-12)

    # An edit: "lumen" leaves the edited memory's own content. (The
    # context field follows the database, which check_field holds it to: a neighbour's
    # context may still quote the old text.)
    services.memory_update(memory_id=lunch.memory_id, content="Team lunch moved to Noodle Barn")
    for field in FIELDS:
        got = check_field(admin_api, field, all_terms(field) + ["lumen", "cafe"])
        if field != "xs":
            assert got["postings"]["lumen"] == [lamps.memory_id]
            assert got["df"]["cafe"] == 0
    # A forget: its document frequencies drop, N with them.
    n_before = {f: index_terms(admin_api, "u-a", "x", field=f)["N"] for f in FIELDS}
    services.memory_forget(memory_id=lamps.memory_id, reason="wrong")
    for field in FIELDS:
        got = check_field(admin_api, field, all_terms(field) + ["lumen", "lamp", "lamps"])
        assert got["N"] == n_before[field] - 1
        if field != "xs":
            assert got["df"]["lumen"] == 0
    # A purge: its words leave every field, its text every neighbour's context.
    services.memory_purge(memory_id=run.memory_id, reason="gone")
    for field in FIELDS:
        got = check_field(admin_api, field, all_terms(field) + ["river", "fridays", "friday"])
        assert got["df"]["river"] == 0 and got["N"] == 2
    # A reindex: the next generation, the same answers.
    reindex.reindex_namespace("u-a")
    for field in FIELDS:
        check_field(admin_api, field, all_terms(field), generation=1)


def test_field_defaults_to_the_default_profiles_and_terms_are_taken_as_given(admin_api):
    m = create("Running shoes by the door")
    default = profile_default()
    field = index_fields.content_field(stemming=default.stemming, context=default.context)
    resp = admin_api.get("/index/terms?" + urlencode({"user_id": "u-a",
                                                     "terms": " running , run,,Running"}))
    assert resp.status_code == 200, resp.content
    got = resp.json()
    assert got == index_terms(admin_api, "u-a", "running", "run", "Running", field=field)
    # No analysis: the stemmed fields hold "run", the plain one "running"; "Running" is no
    # index term (analysis folds case).
    stemmed = index_terms(admin_api, "u-a", "running", "run", "Running", field="s")["df"]
    assert stemmed == {"running": 0, "run": 1, "Running": 0}
    plain = index_terms(admin_api, "u-a", "running", "run", field="c")["postings"]
    assert plain == {"running": [m.memory_id], "run": []}


def test_its_400s(admin_api):
    create("alpha beta")

    def error(**query):
        resp = admin_api.get("/index/terms?" + urlencode(query))
        assert resp.status_code == 400, resp.content
        return resp.json()["error"]["field"]

    assert error(user_id="u-a", terms="alpha", field="zz") == "field"
    assert error(user_id="u-a", terms="alpha", field="c@1") == "field"
    assert error(user_id="u-a", terms=",".join(f"t{i}" for i in range(51))) == "terms"
    assert error(user_id="u-a", terms=" , ") == "terms"
    assert error(user_id="u-a") == "terms"
    assert error(terms="alpha") == "user_id"
    assert error(user_id=" padded", terms="alpha") == "user_id"
    ok = admin_api.get("/index/terms?" + urlencode(
        {"user_id": "u-a", "terms": ",".join(f"t{i}" for i in range(50))}))
    assert ok.status_code == 200 and len(ok.json()["df"]) == 50


def test_its_403s_and_404(admin_user, admin_api, api):
    create("alpha beta")
    path = "/index/terms?" + urlencode({"user_id": "u-a", "terms": "alpha", "field": "c"})
    resp = api.get(path)  # an editor
    assert resp.status_code == 403, resp.content
    agents = ApiClient(None)
    agents.token = token_create(user=admin_user, agents=["planner"])
    resp = agents.get(path)
    assert resp.status_code == 403 and resp.json()["error"]["field"] == "agent_id"
    assert "every agent" in resp.json()["error"]["message"]
    other = ApiClient(None)
    other.token = token_create(user=admin_user, namespaces=["u-b"])
    resp = other.get(path)
    assert resp.status_code == 403 and resp.json()["error"]["field"] == "user_id"
    mine = ApiClient(None)
    mine.token = token_create(user=admin_user, namespaces=["u-a"])
    assert mine.get(path).json()["df"] == {"alpha": 1}
    resp = admin_api.get("/index/terms?" + urlencode({"user_id": "nobody", "terms": "alpha"}))
    assert resp.status_code == 404 and resp.json()["error"]["field"] == "user_id"


def test_its_answers_validate_against_the_openapi_document(admin_api, api):
    from django.test import Client

    from tests.test_openapi import check

    doc = Client().get("/api/v1/openapi.json").json()
    create("alpha beta")
    path = "/index/terms?" + urlencode({"user_id": "u-a", "terms": "alpha,zeta"})
    check(doc, "get", "/index/terms", admin_api.get(path))
    check(doc, "get", "/index/terms", api.get(path))
    check(doc, "get", "/index/terms", admin_api.get(path + "&field=nope"))
    check(doc, "get", "/index/terms", admin_api.get(path.replace("u-a", "nobody")))
