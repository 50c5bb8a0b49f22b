"""Security: ``check --deploy`` clean under production settings; API tokens shown once, stored
hashed and revocable (function and ``revoke_api_token`` command)."""

import datetime as dt
import os
import secrets
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import token_create, token_expired_at, token_lookup, token_revoke
from memories import generation_cache
from memories.models import AuditEvent
from tests.conftest import ApiClient

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db


def _check_deploy(**env) -> subprocess.CompletedProcess:
    """``manage.py check --deploy`` in a fresh process with production-like settings."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "DEBUG",
            "SECRET_KEY",
            "ALLOWED_HOSTS",
            "DJANGO_SETTINGS_MODULE",
            "SECURE_SSL_REDIRECT",
            "SECURE_HSTS_SECONDS",
            "CSRF_TRUSTED_ORIGINS",
        }
    }
    base.update(
        {
            "DJANGO_SETTINGS_MODULE": "memory_console.settings",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(64),
            "ALLOWED_HOSTS": "console.example.com",
        },
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_under_production_settings():
    result = _check_deploy()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_would_notice_a_weak_secret_key():
    """The check above means something: a short key is reported (security.W009)."""
    result = _check_deploy(SECRET_KEY="short")
    assert result.returncode != 0 and "W009" in result.stdout + result.stderr


def test_production_settings_refuse_to_start_without_a_secret_key(tmp_path):
    result = _check_deploy(SECRET_KEY="", SECRET_KEY_FILE=str(tmp_path / "absent"))
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_the_generated_key_file_stands_in_for_the_variable(tmp_path):
    key_file = tmp_path / "secret_key"
    key_file.write_text("k" * 20 + "-generated-by-scripts-run-" + "x" * 30)
    result = _check_deploy(SECRET_KEY="", SECRET_KEY_FILE=str(key_file))
    assert result.returncode == 0, result.stderr


def test_tokens_are_stored_hashed_and_shown_once(admin_user):
    token = token_create(user=admin_user, name="ci")
    row = ApiToken.objects.get(user=admin_user, name="ci")
    assert row.prefix == token[:10] and row.key_hash != token and len(row.key_hash) == 64
    stored = [str(v) for v in ApiToken.objects.filter(pk=row.pk).values().get().values()]
    assert not any(token in v for v in stored)


def test_revoked_token_is_a_401_at_once(admin_api):
    assert admin_api.get("/profiles").status_code == 200
    assert token_revoke(prefix=admin_api.token[:10]) == 1
    response = admin_api.get("/profiles")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert token_revoke(prefix=admin_api.token[:10]) == 0  # already revoked


def test_an_expired_token_is_a_401_that_says_it_expired(admin_user, admin_api):
    assert admin_api.get("/profiles").status_code == 200  # cached in the row cache
    past = timezone.now() - dt.timedelta(seconds=1)
    ApiToken.objects.filter(prefix=admin_api.token[:10]).update(expires_at=past)
    generation_cache.bump()  # an update() sends no signal
    response = admin_api.get("/profiles")
    error = response.json()["error"]
    assert response.status_code == 401 and error["code"] == "unauthorized"
    assert "this token expired at" in error["message"] and "ask an admin" in error["message"]
    unknown = ApiClient(None)
    unknown.token = "mc_" + "x" * 43
    assert unknown.get("/profiles").json()["error"]["message"] == "missing or invalid bearer token"


@pytest.mark.django_db(transaction=True)  # a real commit: the row cache keeps nothing read in a transaction
def test_a_cached_token_stops_working_when_its_expiry_passes(admin_user):
    """Expiry is checked at every lookup, not only when the row is loaded."""
    token = token_create(user=admin_user, expires_at=timezone.now() + dt.timedelta(seconds=1))
    assert token_lookup(token) is not None
    cached_row = token_lookup(token)
    cached_row.expires_at = timezone.now()  # the same row object the cache holds
    assert token_lookup(token) is None and token_expired_at(token) == cached_row.expires_at


def test_create_api_token_sets_an_expiry_in_days(builtins):
    out = StringIO()
    call_command("create_api_token", "agent-9", "--role", "viewer", "--expires-in-days", "30",
                 stdout=out)
    row = ApiToken.objects.get(user__username="agent-9")
    left = row.expires_at - timezone.now()
    assert dt.timedelta(days=29, hours=23) < left <= dt.timedelta(days=30)
    assert "expires at" in out.getvalue()
    assert AuditEvent.objects.get(action="token_created").data["expires_at"]
    with pytest.raises(CommandError, match="expires_in_days: .*from 1 to 3650"):
        call_command("create_api_token", "agent-9", "--expires-in-days", "0", stdout=StringIO())
    assert ApiToken.objects.count() == 1


@pytest.mark.django_db(transaction=True)  # a real commit: the row cache keeps nothing read in a transaction
def test_last_used_is_stamped_at_most_once_a_minute(admin_user, django_assert_num_queries):
    token = token_create(user=admin_user)
    assert token_lookup(token) is not None
    first = ApiToken.objects.get().last_used_at
    assert first is not None
    with django_assert_num_queries(0):  # cached row, stamped less than a minute ago
        for _ in range(5):
            assert token_lookup(token) is not None
    assert ApiToken.objects.get().last_used_at == first
    # Another process (its own cached row, stale stamp) in the same minute changes nothing.
    cached_row = token_lookup(token)
    cached_row.last_used_at = first - dt.timedelta(minutes=5)
    assert token_lookup(token) is not None
    assert ApiToken.objects.get().last_used_at == first
    # A minute later it moves.
    ApiToken.objects.update(last_used_at=first - dt.timedelta(minutes=2))
    cached_row.last_used_at = first - dt.timedelta(minutes=2)
    token_lookup(token)
    assert ApiToken.objects.get().last_used_at > first


def test_revoking_one_token_leaves_the_others(admin_user, admin_api):
    other = token_create(user=admin_user, name="other")
    call_command("revoke_api_token", admin_api.token[:10], stdout=StringIO())
    assert admin_api.get("/profiles").status_code == 401
    admin_api.token = other
    assert admin_api.get("/profiles").status_code == 200


def test_revoke_api_token_command(admin_api):
    out = StringIO()
    call_command("revoke_api_token", admin_api.token[:10], stdout=out)
    assert "revoked 1 token(s)" in out.getvalue() and "ada" in out.getvalue()
    assert admin_api.get("/profiles").status_code == 401
    event = AuditEvent.objects.get(action="token_revoked")
    assert event.target == "user:ada" and event.data == {"prefix": admin_api.token[:10]}
    # Again: nothing live has that prefix any more.
    with pytest.raises(CommandError, match="no live token"):
        call_command("revoke_api_token", admin_api.token[:10], stdout=StringIO())


def test_revoke_api_token_takes_the_whole_token_and_refuses_short_prefixes(admin_api):
    with pytest.raises(CommandError, match="10 characters"):
        call_command("revoke_api_token", "mc_", stdout=StringIO())
    assert admin_api.get("/profiles").status_code == 200
    call_command("revoke_api_token", admin_api.token, stdout=StringIO())
    assert admin_api.get("/profiles").status_code == 401


@pytest.mark.django_db(transaction=True)  # a real commit: another process reads the rows
def test_revoke_api_token_through_manage_py(admin_api, settings):
    """The command as an operator runs it (its own process, same test database file)."""
    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        pytest.skip("the test database of a PostgreSQL run is not reachable by name here")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memory_console.settings_test",
        "DATABASE_URL": "sqlite:///" + str(settings.DATABASES["default"]["NAME"]),
        "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX,
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "revoke_api_token", admin_api.token[:10]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert admin_api.get("/profiles").status_code == 401
