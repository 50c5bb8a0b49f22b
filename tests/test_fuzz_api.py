"""Property-based fuzz of the JSON API from its own OpenAPI document (schemathesis 4).

Every operation gets a bounded number of generated requests (schema-valid and schema-violating
ones), sent in-process through the WSGI application with an admin's bearer token, against the
real Redis and a real (transactional) database. Whatever the input:

- the server never answers 5xx;
- every 4xx carries the JSON error body ``{"error": {"code", "message", "field"}}``.

Path ids are sometimes swapped for ids that exist (a seeded memory and session), and request
``user_id`` values for the seeded namespace, so the fuzz reaches past the 404s into the
services and the index.
"""

import contextlib
import hashlib

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from rq.exceptions import NoSuchJobError
from rq.job import Job
from schemathesis.checks import not_a_server_error

from memories import queue as job_queue
from memories import services
from sessions import services as sessions

# A real commit: schemathesis calls the WSGI application, whose request_finished signal closes
# the database connection (a test transaction would be closed with it).
pytestmark = pytest.mark.django_db(transaction=True)

FUZZ_USER = "fuzz-user"

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


def _pick(value) -> bool:
    """Deterministic coin (so Hypothesis can replay and shrink): half the inputs are swapped
    for a known id."""
    return hashlib.sha256(repr(value).encode()).digest()[0] % 2 == 0


@pytest.fixture
def fuzz_world(admin_api):
    """A seeded namespace (memory with two versions, a session with messages) and the job ids
    the fuzz enqueues, deleted afterwards so no stray job waits in the test Redis."""
    memory, _ = services.memory_create(
        user_id=FUZZ_USER, content="fuzzing the recall of tea", tags=["seed"]
    )
    services.memory_update(memory_id=memory.memory_id, content="fuzzing recall of green tea")
    session = sessions.session_create(user_id=FUZZ_USER, session_id="fuzz-session")
    sessions.session_append(
        session_id=session.session_id, messages=[{"role": "user", "content": "hello tea"}]
    )
    world = {
        "token": admin_api.token,
        "memory_id": memory.memory_id,
        "session_id": session.session_id,
        "jobs": [],
    }
    yield world
    connection = job_queue.get_connection()
    for job_id in world["jobs"]:
        with contextlib.suppress(NoSuchJobError):
            Job.fetch(job_id, connection=connection).delete(remove_from_queue=True)


def _steer(case, world) -> None:
    """Point some generated ids at existing objects."""
    params = case.path_parameters or {}
    for name in ("memory_id", "session_id"):
        if name in params and _pick(params[name]):
            params[name] = world[name]
    if (
        isinstance(case.body, dict)
        and isinstance(case.body.get("user_id"), str)
        and _pick(case.body["user_id"])
    ):
        case.body["user_id"] = FUZZ_USER
    if case.query and isinstance(case.query.get("user_id"), str) and _pick(case.query["user_id"]):
        case.query["user_id"] = FUZZ_USER


def _check_error_body(response, case) -> None:
    if not 400 <= response.status_code < 500:
        return
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(
            f"{case.method} {case.formatted_path}: {response.status_code} without a JSON body: "
            f"{response.text[:200]!r}"
        ) from None
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict) and {"code", "message", "field"} <= error.keys(), (
        f"{case.method} {case.formatted_path}: {response.status_code} body is not "
        f"{{'error': {{code, message, field}}}}: {body!r}"
    )
    assert isinstance(error["code"], str) and isinstance(error["message"], str)


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
def test_api_fuzz(case, fuzz_world):
    _steer(case, fuzz_world)
    response = case.call(headers={"Authorization": f"Bearer {fuzz_world['token']}"})
    if response.status_code == 202:
        job_id = (response.json() or {}).get("job_id")
        if job_id:
            fuzz_world["jobs"].append(job_id)
    case.validate_response(response, checks=[not_a_server_error])
    _check_error_body(response, case)


# Inputs the generator does not produce (it sends valid Unicode, and strings without a
# format), found by probing around the fuzz. Each was a 500.


def _error_of(response, status=400) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:300])
    error = response.json()["error"]
    assert {"code", "message", "field"} <= error.keys()
    return error


@pytest.fixture
def probe_api(admin_api):
    admin_api.client.raise_request_exception = False  # see the 500 as the agent would
    return admin_api


@pytest.mark.parametrize(
    "body",
    [
        "{",
        "[1, 2",
        "\x00",
        "null",
        "[]",
        '"x"',
        '{"user_id": "u", "content": "a"} trailing',
        '{"user_id": "u", "content": "a", "importance": NaN}',
        '{"user_id": "u", "content": "a", "importance": Infinity}',
        '{"user_id": "u", "content": "a", "importance": -Infinity}',
    ],
)
def test_malformed_json_is_a_400_error_body(probe_api, body):
    _error_of(probe_api.post("/memories", body))


LONE_SURROGATE = "\\ud800"  # a valid JSON escape that no UTF-8 text can hold
NUL = "\\u0000"  # PostgreSQL stores it in neither text nor jsonb


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/memories", '{"user_id": "u", "content": "X"}'),
        ("/memories", '{"user_id": "X", "content": "a"}'),
        ("/memories", '{"user_id": "u", "content": "a", "conversation_id": "X"}'),
        ("/memories", '{"user_id": "u", "content": "a", "source": "X", "author": "X"}'),
        ("/memories", '{"user_id": "u", "content": "a", "tags": ["X"], "keywords": ["X"]}'),
        ("/memories", '{"user_id": "u", "content": "a", "metadata": {"X": "X"}}'),
        ("/memories", '{"user_id": "u", "content": "a", "context": "X"}'),
        ("/recall", '{"user_id": "X", "query": "X"}'),
        ("/sessions", '{"user_id": "X", "session_id": "X", "agent_id": "X"}'),
        ("/sessions", '{"user_id": "u", "system_prompt": "X", "metadata": {"k": "X"}}'),
        ("/analyze", '{"text": "X"}'),
    ],
)
@pytest.mark.parametrize("bad", [LONE_SURROGATE, NUL], ids=["lone-surrogate", "nul"])
def test_unstorable_text_is_a_400_on_every_database(probe_api, path, template, bad):
    """Was a 500 (surrogates: everywhere; NUL: on PostgreSQL, stored silently on SQLite)."""
    _error_of(probe_api.post(path, template.replace("X", bad + "x")))


@pytest.mark.parametrize(
    "value",
    [
        "2024-02-30T00:00:00",  # well-formed, impossible day: parse_datetime raises
        "2024-01-01T25:00:00",
        "2024-01-01T00:00:00+99:00",  # offset out of range
        "9999-12-31T23:59:59-14:00",  # beyond year 9999 in UTC
        "0001-01-01T00:00:00+14:00",  # before year 1 in UTC
        "yesterday",
    ],
)
def test_impossible_datetimes_are_a_400_naming_the_field(probe_api, value):
    assert (
        _error_of(
            probe_api.post(
                "/memories", {"user_id": "u", "content": "dated " + value, "created_at": value}
            )
        )["field"]
        == "created_at"
    )
    quoted = value.replace("+", "%2B")
    assert _error_of(probe_api.get(f"/audit?since={quoted}"))["field"] == "since"
    probe_api.post("/sessions", {"user_id": "u", "session_id": "dated"})
    assert _error_of(probe_api.get(f"/sessions/dated/context?at={quoted}"))["field"] == "at"
    doc = {
        "schema_version": 1,
        "memories": [{"user_id": "u", "content": "imported " + value, "created_at": value}],
    }
    assert _error_of(probe_api.post("/import", doc))["field"] == "created_at"


@pytest.mark.parametrize("job_id", ["Memory Console API", "job:1", "é", "-" * 65])
def test_odd_job_ids_are_a_404(probe_api, job_id):
    from urllib.parse import quote

    assert _error_of(probe_api.get("/jobs/" + quote(job_id, safe="")), 404)["field"] == "job_id"


@pytest.mark.parametrize(
    ("path", "status", "field"),
    [
        ("/audit?actor=a%00", 400, "actor"),
        ("/audit?target=%00", 400, "target"),
        ("/audit?action=%00", 400, "action"),
        ("/sessions?user_id=a%00b", 400, "user_id"),
        ("/sessions/a%00", 404, None),  # unknown id, in any format
        ("/sessions/a%00/context", 404, None),
        ("/memories/mem_%00/history", 404, None),
    ],
)
def test_nul_in_query_or_path_is_a_4xx(probe_api, path, status, field):
    """Were 500s on PostgreSQL (a NUL cannot even be compared there)."""
    error = _error_of(probe_api.get(path), status)
    if status == 400:
        assert error["field"] == field
