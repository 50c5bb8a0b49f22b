"""Isolation and abuse (issue 13): what a namespace-restricted token may not touch, jobs
checked against the token's namespaces, the bounded cost of index health, one way of paging
for every API list, and the security headers and cookies.

Everything goes through HTTP (the API with bearer tokens, the console with a session) or a
management command, so these tests hold whatever module the code lives in.
"""

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from tests.conftest import ApiClient, login, work

# The PostgreSQL pass runs these (scripts/test -m postgres): every list paged by cursor.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

REPO = Path(__file__).resolve().parent.parent


def _model(name: str):
    """A model class by name, wherever its app lives."""
    from django.apps import apps

    return next(m for m in apps.get_models() if m.__name__ == name)


def _token(username: str, role: str, *namespaces: str) -> ApiClient:
    """A bearer client made through ``create_api_token`` (``--namespace`` repeated)."""
    out = io.StringIO()
    args = [username, "--role", role]
    for ns in namespaces:
        args += ["--namespace", ns]
    call_command("create_api_token", *args, stdout=out)
    client = ApiClient(None)
    client.token = out.getvalue().strip().splitlines()[-1]
    return client


@pytest.fixture
def scoped_admin(builtins):
    return _token("scoped-admin", "admin", "team-a")


@pytest.fixture
def full_admin(builtins):
    return _token("full-admin", "admin")


# --- profiles: global settings need an unrestricted token --------------------------------

def test_a_restricted_admin_cannot_create_a_default_profile(scoped_admin, full_admin):
    """A default profile changes every namespace's recall: not for a restricted token."""
    refused = scoped_admin.post("/profiles", {"name": "mine-default", "is_default": True})
    assert refused.status_code == 403, refused.content
    assert refused.json()["error"]["field"] == "is_default"
    profiles = {p["name"]: p for p in full_admin.get("/profiles").json()["profiles"]}
    assert "mine-default" not in profiles
    # A plain profile of its own is fine, and so is the default mark for an unrestricted one.
    assert scoped_admin.post("/profiles", {"name": "mine"}).status_code == 201
    assert full_admin.post("/profiles", {"name": "theirs", "is_default": True}).status_code == 201


def test_a_restricted_admin_cannot_mark_a_profile_default(scoped_admin, full_admin):
    assert scoped_admin.post("/profiles", {"name": "mine"}).status_code == 201
    refused = scoped_admin.patch("/profiles/mine", {"is_default": True})
    assert refused.status_code == 403 and refused.json()["error"]["field"] == "is_default"
    assert full_admin.get("/profiles/mine").json()["is_default"] is False


def test_a_restricted_admin_edits_and_deletes_only_its_own_profiles(scoped_admin, full_admin):
    assert full_admin.post("/profiles", {"name": "shared", "k1": 1.1}).status_code == 201
    assert scoped_admin.patch("/profiles/shared", {"k1": 2.0}).status_code == 403
    assert scoped_admin.delete("/profiles/shared").status_code == 403
    kept = full_admin.get("/profiles/shared").json()
    assert kept["k1"] == 1.1
    # Its own profile stays its own to change and delete.
    assert scoped_admin.post("/profiles", {"name": "mine"}).status_code == 201
    assert scoped_admin.patch("/profiles/mine", {"k1": 1.5}).status_code == 200
    assert scoped_admin.delete("/profiles/mine").status_code == 204
    # An unrestricted admin still changes anyone's.
    assert full_admin.patch("/profiles/shared", {"k1": 1.3}).status_code == 200


def test_a_non_superuser_admin_cannot_mint_a_token_for_a_superuser(builtins, admin_user):
    """A token carries its user's powers; minting one for a superuser is an escalation."""
    User.objects.create_superuser("root", password="pw-root-long")
    page = login(admin_user)
    answer = page.post("/tokens/new/", {"username": "root", "role": "", "name": "x"})
    assert answer.status_code in (400, 403), answer.status_code
    assert "mc_" not in answer.content.decode()
    root = User.objects.get(username="root")
    assert not _model("ApiToken").objects.filter(user=root).exists()
    # A superuser may.
    boss = login(root)
    made = boss.post("/tokens/new/", {"username": "root", "role": "", "name": "x"})
    assert made.status_code == 302 and made["Location"] == "/tokens/created/"


# --- jobs: checked against the token's namespaces -----------------------------------------

@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_job_is_visible_only_to_tokens_that_reach_its_namespaces(builtins, empty_queues,
                                                                   full_admin):
    mine = _token("scoped-a", "admin", "team-a")
    other = _token("scoped-b", "admin", "team-b")
    full_admin.post("/memories", {"user_id": "team-a", "content": "a note of team a"})
    job_id = mine.post("/reindex", {"user_id": "team-a"}).json()["job_id"]
    assert mine.get(f"/jobs/{job_id}").status_code == 200
    hidden = other.get(f"/jobs/{job_id}")
    assert hidden.status_code == 404 and hidden.json()["error"]["field"] == "job_id"
    assert full_admin.get(f"/jobs/{job_id}").status_code == 200
    # A job over every namespace (the fixed, guessable periodic reconcile) is not for them.
    call_command("schedule_periodic", stdout=io.StringIO())
    from operations.jobs import PERIODIC_RECONCILE_ID

    assert full_admin.get(f"/jobs/{PERIODIC_RECONCILE_ID}").status_code == 200
    assert mine.get(f"/jobs/{PERIODIC_RECONCILE_ID}").status_code == 404
    reconcile = full_admin.post("/index/reconcile").json()["job_id"]
    assert mine.get(f"/jobs/{reconcile}").status_code == 404
    work()
    assert full_admin.get(f"/jobs/{reconcile}").json()["status"] == "finished"


# --- objects of other namespaces: never confirmed -------------------------------------------

def _same_answer(a, b, a_id: str, b_id: str) -> None:
    """Two refusals alike but for the id each names: status, code, field and message."""
    assert a.status_code == b.status_code, (a.content, b.content)
    error_a, error_b = a.json()["error"], b.json()["error"]
    assert error_a["message"].replace(a_id, "ID") == error_b["message"].replace(b_id, "ID")
    assert (error_a["code"], error_a["field"]) == (error_b["code"], error_b["field"])


def test_a_policy_run_of_another_namespace_is_unknown_to_a_restricted_token(
        builtins, empty_queues, scoped_admin, full_admin):
    from memories.models import AuditEvent

    AuditEvent.objects.create(actor="ops", action="cleanup", target="team-b",
                              data={"run_id": "run-of-b", "forgotten_ids": []})
    foreign = scoped_admin.post("/cleanup/undo", {"run_id": "run-of-b", "reason": "x"})
    unknown = scoped_admin.post("/cleanup/undo", {"run_id": "run-of-nobody", "reason": "x"})
    assert foreign.status_code == 404 and foreign.json()["error"]["field"] == "run_id"
    _same_answer(foreign, unknown, "run-of-b", "run-of-nobody")
    assert full_admin.post("/cleanup/undo", {"run_id": "run-of-b", "reason": "x"}
                           ).status_code == 200


def test_a_taken_session_id_is_refused_alike_whichever_namespace_holds_it(builtins,
                                                                        full_admin):
    """Session ids are unique across namespaces: a restricted token's create of one held by
    a namespace it cannot see gets the answer of one its own namespace holds, which says
    neither that it exists nor where (GET answers 404 for it, as for none)."""
    scoped = _token("scoped-editor", "editor", "team-a")
    assert full_admin.post("/sessions", {"user_id": "team-b", "session_id": "theirs"}
                           ).status_code == 201
    assert scoped.post("/sessions", {"user_id": "team-a", "session_id": "mine"}
                       ).status_code == 201
    foreign = scoped.post("/sessions", {"user_id": "team-a", "session_id": "theirs"})
    own = scoped.post("/sessions", {"user_id": "team-a", "session_id": "mine"})
    assert foreign.status_code == 400 and foreign.json()["error"]["field"] == "session_id"
    _same_answer(foreign, own, "theirs", "mine")
    assert "exist" not in foreign.json()["error"]["message"]
    assert "team-b" not in foreign.content.decode()
    assert scoped.get("/sessions/theirs").status_code == 404


def test_a_replace_import_does_not_say_that_a_memory_id_belongs_to_another_namespace(
        builtins, scoped_admin, full_admin):
    theirs = full_admin.post("/memories", {"user_id": "team-b", "content": "b's note"}).json()
    doc = {"schema_version": 2, "user_id": "team-a", "memories": [
        {"memory_id": theirs["memory_id"], "user_id": "team-a", "content": "mine now"}]}
    refused = scoped_admin.post("/import?mode=replace", doc)
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "memory_id"
    message = refused.json()["error"]["message"]
    assert "namespace" not in message and "team-b" not in message
    assert full_admin.get(f"/memories/{theirs['memory_id']}").json()["content"] == "b's note"


# --- index health: bounded cost ------------------------------------------------------------

@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_index_health_serves_cached_drift_with_its_time(builtins, empty_queues, full_admin,
                                                        django_assert_max_num_queries):
    for n in range(30):
        full_admin.post("/memories", {"user_id": "team-a", "content": f"note number {n}"})
    first = full_admin.get("/index/health").json()
    assert first["drift"] == 0 and first["memories_in_db"] == 30
    assert first["drift_at"], first
    # Polling again reads the cached figure: no pass over the memories (a handful of
    # queries whatever the memory count) and the same drift_at.
    with django_assert_max_num_queries(6):
        again = full_admin.get("/index/health").json()
    assert again["drift_at"] == first["drift_at"]
    # A reconcile recomputes it.
    full_admin.post("/index/reconcile")
    work()
    after = full_admin.get("/index/health").json()
    assert after["drift_at"] > first["drift_at"]


def test_the_index_page_shows_when_drift_was_computed(builtins, admin_role_client, full_admin):
    full_admin.post("/memories", {"user_id": "team-a", "content": "something to count"})
    page = admin_role_client.get("/index/").content.decode()
    assert 'id="drift-at"' in page


def test_index_health_does_not_count_expired_short_term_memories_as_drift(builtins,
                                                                           full_admin):
    made = full_admin.post("/memories", {"user_id": "team-a", "content": "fleeting thought",
                                         "type": "short_term", "ttl_seconds": 1})
    assert made.status_code == 201
    full_admin.post("/memories", {"user_id": "team-a", "content": "lasting thought"})
    time.sleep(2.2)  # past expire_at, and past the Redis key's own TTL
    health = full_admin.get("/index/health?refresh=1").json()
    assert health["drift"] == 0, health.get("drifted")


# --- one way of paging for every list --------------------------------------------------------

def _walk(client: ApiClient, path: str, key: str, limit: int) -> list:
    """Every item of a paged list, following ``next_cursor`` until it is null."""
    items, cursor, pages = [], None, 0
    while True:
        sep = "&" if "?" in path else "?"
        url = f"{path}{sep}limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.content)
        body = answer.json()
        assert "next_cursor" in body, body
        assert len(body[key]) <= limit
        items += body[key]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            return items
        assert pages < 100


def test_every_api_list_pages_with_cursor_and_limit(builtins, full_admin):
    for n in range(7):
        full_admin.post("/sessions", {"user_id": "team-a", "session_id": f"s-{n}"})
    sessions = _walk(full_admin, "/sessions?user_id=team-a", "sessions", 3)
    assert sorted(s["session_id"] for s in sessions) == [f"s-{n}" for n in range(7)]

    for n in range(5):
        full_admin.post("/profiles", {"name": f"p-{n}"})
    profiles = _walk(full_admin, "/profiles", "profiles", 2)
    names = [p["name"] for p in profiles]
    assert len(names) == len(set(names)) and {f"p-{n}" for n in range(5)} <= set(names)

    audit = _walk(full_admin, "/audit", "events", 2)
    assert len(audit) >= 5 and len({json.dumps(e, sort_keys=True) for e in audit}) == len(audit)

    memory_ids = [full_admin.post("/memories", {"user_id": "team-a", "content": f"fact {n}"}
                                  ).json()["memory_id"] for n in range(5)]
    for memory_id in memory_ids:
        full_admin.post("/judgments", {"user_id": "team-a", "query": "fact",
                                       "memory_id": memory_id, "grade": 2})
    judged = _walk(full_admin, "/judgments?user_id=team-a", "judgments", 2)
    assert sorted(j["memory_id"] for j in judged) == sorted(memory_ids)

    for n in range(3):
        full_admin.post("/query-sets", {"name": f"qs-{n}", "user_id": "team-a",
                                        "queries": ["fact"]})
    sets = _walk(full_admin, "/query-sets", "query_sets", 2)
    assert sorted(q["name"] for q in sets) == ["qs-0", "qs-1", "qs-2"]


def test_the_last_page_says_next_cursor_null_and_bad_paging_is_a_400(builtins, full_admin):
    full_admin.post("/sessions", {"user_id": "team-a", "session_id": "only"})
    body = full_admin.get("/sessions?user_id=team-a&limit=10").json()
    assert body["next_cursor"] is None and len(body["sessions"]) == 1
    bad = full_admin.get("/sessions?user_id=team-a&limit=0")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "limit"
    bad = full_admin.get("/sessions?user_id=team-a&cursor=not-a-cursor")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "cursor"


def test_a_memorys_history_still_returns_every_version(builtins, full_admin):
    memory_id = full_admin.post("/memories", {"user_id": "team-a", "content": "v1"}).json()[
        "memory_id"]
    for n in range(2, 120):
        full_admin.patch(f"/memories/{memory_id}", {"content": f"v{n}"})
    versions = full_admin.get(f"/memories/{memory_id}/history").json()["versions"]
    assert [v["version"] for v in versions] == list(range(1, 120))


# --- hardening: CSP, cookies, the proxy header ----------------------------------------------

def test_every_response_carries_a_content_security_policy_without_inline_script(
        builtins, admin_role_client):
    answer = admin_role_client.get("/")
    policy = answer.headers.get("Content-Security-Policy", "")
    assert "script-src 'self'" in policy or ("default-src 'self'" in policy
                                             and "script-src" not in policy), policy
    assert "'unsafe-inline'" not in policy.split("script-src")[-1].split(";")[0]
    assert "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy


def _settings_in_subprocess(env: dict, expr: str) -> str:
    base = {k: v for k, v in os.environ.items()
            if k not in ("DEBUG", "BEHIND_PROXY", "DJANGO_SETTINGS_MODULE")}
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
            "'memory_console.settings'); django.setup(); from django.conf import settings; "
            f"print(repr({expr}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**base, **env},
                         capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.strip().splitlines()[-1]


def test_csrf_cookie_is_httponly():
    assert _settings_in_subprocess({"DEBUG": "1"}, "settings.CSRF_COOKIE_HTTPONLY") == "True"
    assert _settings_in_subprocess({"DEBUG": "0", "SECRET_KEY": "x" * 60},
                                   "settings.CSRF_COOKIE_HTTPONLY") == "True"


def test_the_proxy_header_is_trusted_only_when_a_proxy_is_declared():
    prod = {"DEBUG": "0", "SECRET_KEY": "x" * 60}
    expr = "getattr(settings, 'SECURE_PROXY_SSL_HEADER', None)"
    assert _settings_in_subprocess(prod, expr) == "None"
    assert _settings_in_subprocess({**prod, "BEHIND_PROXY": "1"}, expr) == (
        "('HTTP_X_FORWARDED_PROTO', 'https')")


def test_a_forged_forwarded_proto_does_not_make_a_request_secure(settings):
    """Without a declared proxy, anyone could send X-Forwarded-Proto: https."""
    settings.SECURE_PROXY_SSL_HEADER = None
    from django.test import RequestFactory

    request = RequestFactory().get("/", HTTP_X_FORWARDED_PROTO="https")
    assert request.is_secure() is False


def test_the_csp_header_reaches_a_login_page_too():
    answer = Client().get("/accounts/login/")
    assert "Content-Security-Policy" in answer.headers
