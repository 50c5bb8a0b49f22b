"""API tokens (admin): list, create for an existing user with a role (shown once), revoke;
each an audit event."""

import datetime as dt
import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from accounts.models import ApiToken
from accounts.roles import role_of
from accounts.tokens import token_create, token_user
from memories.models import AuditEvent
from tests.conftest import login
from tests.views.conftest import HX, ids, tags, text

pytestmark = pytest.mark.django_db


def token_on(body) -> str:
    return next(a["value"] for t, a in tags(body) if a.get("id") == "new-token")


def create(client, data):
    """POST the form; on success it redirects (POST-redirect-GET) to the page that shows the
    token once: that page's answer."""
    resp = client.post("/tokens/new/", data)
    assert resp.status_code == 302 and resp["Location"] == "/tokens/created/"
    assert "mc_" not in resp["Location"]  # never the token in a URL
    return client.get(resp["Location"])


def test_it_lists_tokens(admin_role_client, editor, viewer):
    token_create(user=editor, name="ci bot")
    old = token_create(user=viewer, name="old")
    ApiToken.objects.filter(prefix=old[:10]).update(revoked_at="2025-01-01T00:00:00Z")
    token_user(token_create(user=editor, name="used"))  # sets last_used_at
    resp = admin_role_client.get("/tokens/")
    body = text(resp)
    assert (
        resp.status_code == 200 and "<html" in body and {"token-table", "token-form"} <= ids(body)
    )
    for shown in ("ci bot", "eddie", "vera", old[:10], "revoked 2025-01-01", "never"):
        assert shown in body
    assert old not in body  # never the token itself
    assert body.count("Revoke</button>") == 2  # live ones only


def test_htmx_gets_the_rows_fragment(admin_role_client, editor):
    token_create(user=editor)
    resp = admin_role_client.get("/tokens/", headers=HX)
    assert resp.status_code == 200 and "<html" not in text(resp)
    assert text(resp).lstrip().startswith('<section class="card" id="token-rows">')


def test_an_admin_creates_a_token_shown_once(admin_role_client, editor):
    resp = create(admin_role_client, {"username": "eddie", "role": "", "name": "deploy bot"})
    body = text(resp)
    assert resp.status_code == 200 and "token-created" in ids(body)
    token = token_on(body)
    assert token.startswith("mc_") and token_user(token) == editor
    assert "no-store" in resp["Cache-Control"]
    assert role_of(User.objects.get(pk=editor.pk)) == "editor"  # kept
    row = ApiToken.objects.get(name="deploy bot")
    assert row.prefix == token[:10] and token not in row.key_hash
    event = AuditEvent.objects.get(action="token_created")
    assert (event.actor, event.target) == ("ada", "user:eddie")
    assert event.data == {
        "role": "editor",
        "prefix": token[:10],
        "name": "deploy bot",
        "namespaces": [],
    }
    # Never again: the list shows the prefix only.
    listing = text(admin_role_client.get("/tokens/"))
    assert token[:10] in listing and token not in listing


def test_a_refresh_of_the_created_page_creates_nothing_and_shows_the_token_no_more(
    admin_role_client, editor
):
    shown = create(admin_role_client, {"username": "eddie", "name": "deploy bot"})
    token = token_on(shown.content)
    again = admin_role_client.get("/tokens/created/")
    assert again.status_code == 302 and again["Location"] == "/tokens/"
    listing = text(admin_role_client.get("/tokens/"))
    assert "shown once only" in listing and token not in listing
    assert ApiToken.objects.count() == 1
    assert AuditEvent.objects.filter(action="token_created").count() == 1


def test_a_role_change_needs_a_confirmation(admin_role_client, viewer):
    """Never silently: a role that differs from the user's is a form error first."""
    resp = admin_role_client.post("/tokens/new/", {"username": "vera", "role": "editor"})
    body = text(resp)
    assert resp.status_code == 409 and "vera is viewer; a token with the role editor" in body
    assert "token_change_role" in ids(body)  # the confirmation box is offered
    assert role_of(User.objects.get(pk=viewer.pk)) == "viewer"
    assert not ApiToken.objects.exists() and not AuditEvent.objects.exists()
    resp = create(admin_role_client, {"username": "vera", "role": "editor", "change_role": "on"})
    assert resp.status_code == 200 and "Their role is now <strong>editor</strong>" in text(resp)
    assert role_of(User.objects.get(pk=viewer.pk)) == "editor"
    assert token_user(token_on(resp.content)) == viewer
    event = AuditEvent.objects.get(action="token_created")
    assert event.data["role"] == "editor" and event.data["role_was"] == "viewer"


def test_the_same_role_needs_no_confirmation(admin_role_client, viewer):
    resp = create(admin_role_client, {"username": "vera", "role": "viewer"})
    assert resp.status_code == 200 and "Their role is now" not in text(resp)


@pytest.mark.parametrize(
    ("data", "message", "status"),
    [
        ({"username": "nobody"}, "nobody does not exist yet: choose a role", 400),
        ({"username": ""}, "This field is required", 400),
        ({"username": "bad name!", "role": "viewer"}, "Enter a valid username", 400),
        ({"username": "eddie", "role": "root"}, "Select a valid choice", 400),
        ({"username": "nora"}, "nora has no role yet", 400),
        ({"username": "ada", "role": "viewer"}, "Confirm the change of role", 409),
        ({"username": "ada", "role": "viewer", "change_role": "on"}, "cannot lower your own", 400),
        ({"username": "gone", "role": "viewer"}, "gone is deactivated", 400),
        ({"username": "eddie", "namespaces": "team-x"}, "No such namespace: “team-x”", 400),
        ({"username": "eddie", "namespaces": "u-a, bad\u0007id"}, "control characters", 400),
    ],
)
def test_bad_input_is_a_form_error(admin_role_client, editor, data, message, status):
    User.objects.create_user("nora")
    User.objects.create_user("gone", is_active=False)
    users = User.objects.count()
    resp = admin_role_client.post("/tokens/new/", data)
    assert resp.status_code == status and message in text(resp)
    assert "token-form" in ids(text(resp))  # the form again, with what was typed
    assert not ApiToken.objects.exists() and not AuditEvent.objects.exists()
    assert User.objects.count() == users  # no user created by a refused form


def test_it_creates_the_user_as_the_cli_does(admin_role_client, make_memory):
    """A new name: the user is created with the role (no usable password), restricted to
    the namespaces given, exactly as ``create_api_token`` leaves a user."""
    make_memory("deploys run on Tuesdays", user_id="team-a")
    resp = create(
        admin_role_client,
        {"username": "agent-7", "role": "editor", "namespaces": "team-a", "name": "bot"},
    )
    body = text(resp)
    assert resp.status_code == 200 and "was created with the role <strong>editor</strong>" in body
    assert "Restricted to <code>team-a</code>" in body
    assert 'data-copy="#new-token"' in body and "copy-token" in ids(body)
    web = User.objects.get(username="agent-7")
    row = ApiToken.objects.get(user=web)
    assert row.namespaces == ["team-a"] and token_user(token_on(body)) == web

    out = io.StringIO()
    call_command(
        "create_api_token", "agent-8", "--role", "editor", "--namespace", "team-a", stdout=out
    )
    cli = User.objects.get(username="agent-8")
    web_state = (web.has_usable_password(), role_of(web), web.is_active)
    cli_state = (cli.has_usable_password(), role_of(cli), cli.is_active)
    assert web_state == cli_state == (False, "editor", True)
    assert ApiToken.objects.get(user=cli).namespaces == row.namespaces
    event = AuditEvent.objects.get(action="token_created", target="user:agent-7")
    assert event.data["user_created"] is True and event.data["namespaces"] == ["team-a"]


def test_a_new_namespace_needs_the_box(admin_role_client, editor):
    create(
        admin_role_client, {"username": "eddie", "namespaces": "brand-new", "new_namespaces": "on"}
    )
    assert ApiToken.objects.get().namespaces == ["brand-new"]


def test_the_form_suggests_users_and_namespaces(admin_role_client, editor, make_memory):
    make_memory("a note", user_id="team-a")
    body = text(admin_role_client.get("/tokens/"))
    options = [a["value"] for t, a in tags(body) if t == "option" and "value" in a]
    assert "team-a" in options and "eddie" in options
    assert 'list="namespaces"' in body and 'id="namespaces"' in body


def test_the_cli_keeps_an_existing_role_without_role(editor):
    out = io.StringIO()
    call_command("create_api_token", "eddie", stdout=out)
    assert role_of(User.objects.get(pk=editor.pk)) == "editor"
    assert "updated user eddie (editor)" in out.getvalue()
    call_command("create_api_token", "eddie", "--role", "viewer", stdout=out)
    assert role_of(User.objects.get(pk=editor.pk)) == "viewer"  # --role is explicit


def test_an_admin_revokes_a_token(admin_role_client, editor):
    token = token_create(user=editor, name="ci")
    prefix = token[:10]
    resp = admin_role_client.post(f"/tokens/{prefix}/revoke/", headers=HX)
    body = text(resp)
    assert resp.status_code == 200 and body.lstrip().startswith(
        '<section class="card" id="token-rows">'
    )
    assert f"Revoked 1 token starting with {prefix}." in body and "revoked" in body
    assert token_user(token) is None
    event = AuditEvent.objects.get(action="token_revoked")
    assert (event.actor, event.target, event.data["prefix"]) == ("ada", "user:eddie", prefix)
    again = admin_role_client.post(f"/tokens/{prefix}/revoke/")  # idempotent, no JavaScript
    assert (
        again.status_code == 302 and AuditEvent.objects.filter(action="token_revoked").count() == 1
    )
    assert "was already revoked" in text(admin_role_client.get("/tokens/"))


@pytest.mark.parametrize("headers", [HX, {}], ids=["htmx", "plain"])
def test_only_a_superuser_revokes_a_superusers_token(admin_role_client, headers):
    """As only a superuser may create one: the writer refuses, so the page (and any other
    way in) cannot revoke it; the page says why, in place, and nothing changes."""
    root = User.objects.create_superuser("root", password="pw-root-long")
    token = token_create(user=root)
    refused = admin_role_client.post(f"/tokens/{token[:10]}/revoke/", headers=headers)
    assert refused.status_code == 403
    assert "only a superuser may revoke a superuser" in text(refused)
    assert token_user(token) == root and not AuditEvent.objects.exists()
    done = login(root).post(f"/tokens/{token[:10]}/revoke/", headers=HX)
    assert done.status_code == 200 and token_user(token) is None


def test_the_revoke_writer_refuses_a_superusers_token_to_other_actors(admin_user):
    from accounts.tokens import token_revoke
    from memories.errors import PermissionDenied

    root = User.objects.create_superuser("root", password="pw-root-long")
    token = token_create(user=root)
    with pytest.raises(PermissionDenied) as refused:
        token_revoke(prefix=token[:10], actor=admin_user)
    assert refused.value.field == "prefix" and token_user(token) == root
    assert token_revoke(prefix=token[:10], actor=root) == 1  # a superuser may
    other = token_create(user=root)
    assert token_revoke(prefix=other[:10]) == 1  # the command line's operator may


def test_revoke_404_and_405(admin_role_client):
    assert admin_role_client.post("/tokens/mc_nothing/revoke/").status_code == 404
    assert admin_role_client.get("/tokens/mc_nothing/revoke/").status_code == 405
    assert admin_role_client.get("/tokens/new/").status_code == 405
    assert admin_role_client.post("/tokens/").status_code == 405


@pytest.mark.parametrize("client_name", ["viewer_client", "editor_client"])
def test_tokens_are_for_admins(request, client_name, editor):
    client = request.getfixturevalue(client_name)
    token = token_create(user=editor)
    assert client.get("/tokens/").status_code == 403
    resp = client.post("/tokens/new/", {"username": "eddie", "role": "admin"})
    assert resp.status_code == 403 and "needs the admin role" in text(resp)
    assert client.post(f"/tokens/{token[:10]}/revoke/", headers=HX).status_code == 403
    assert ApiToken.objects.count() == 1 and token_user(token) == editor
    assert role_of(User.objects.get(pk=editor.pk)) == "editor" and not AuditEvent.objects.exists()


def test_token_list_query_count_is_pinned(admin_role_client, editor, django_assert_num_queries):
    for n in range(5):
        token_create(user=editor, name=f"t{n}")
    # session, user, role groups; COUNT, one page of tokens with their users; usernames and
    # namespaces for the create form's suggestions.
    # + the open conflicts' COUNT in the navigation (base.html).
    with django_assert_num_queries(8):
        assert admin_role_client.get("/tokens/").status_code == 200


def test_a_token_gets_an_expiry_in_days_and_the_list_shows_expiry_and_last_use(
    admin_role_client, editor
):
    shown = text(create(admin_role_client, {"username": "eddie", "expires_in_days": "7"}))
    row = ApiToken.objects.get()
    assert row.expires_at is not None
    assert f"Expires {row.expires_at:%Y-%m-%d %H:%M}" in shown
    assert AuditEvent.objects.get(action="token_created").data["expires_at"]
    old = token_create(user=editor, name="old", expires_at=timezone.now() - dt.timedelta(days=1))
    ApiToken.objects.filter(prefix=old[:10]).update(
        last_used_at=timezone.now() - dt.timedelta(days=2)
    )
    body = text(admin_role_client.get("/tokens/"))
    rows = {a["data-prefix"] for t, a in tags(body) if t == "tr" and "data-prefix" in a}
    assert rows == {row.prefix, old[:10]}
    assert f">{row.expires_at:%Y-%m-%d}</td>" in body and ">expired</span>" in body
    assert token_user(old) is None


@pytest.mark.parametrize("days", ["0", "3651", "soon"])
def test_a_bad_expiry_is_a_form_error(admin_role_client, editor, days):
    resp = admin_role_client.post("/tokens/new/", {"username": "eddie", "expires_in_days": days})
    assert resp.status_code == 400 and "expires-error" in ids(text(resp))
    assert not ApiToken.objects.exists()
