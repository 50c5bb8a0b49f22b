"""Users (admin): the list with roles, create a human login (a password, or a one-time link),
change a role after a confirmation, deactivate and reactivate; the rules (not oneself, a
superuser only by a superuser); a deactivated user's tokens stop working at once."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.roles import role_of
from accounts.tokens import token_create, token_user
from memories.models import AuditEvent
from tests.conftest import ApiClient, login
from tests.views.conftest import ids, tags, text

pytestmark = pytest.mark.django_db


def fresh(user) -> User:
    return User.objects.get(pk=user.pk)


def can_log_in(username: str, password: str) -> bool:
    """Through the login page, as a person does (django-axes needs the request)."""
    resp = Client().post("/accounts/login/", {"username": username, "password": password})
    return resp.status_code == 302


def test_it_lists_users_with_role_last_login_and_state(admin_role_client, editor, viewer):
    User.objects.create_superuser("root", password="pw-root-long")
    User.objects.create_user("gone", is_active=False)
    body = text(admin_role_client.get("/users/"))
    rows = {a["data-username"] for t, a in tags(body) if t == "tr" and "data-username" in a}
    assert rows == {"ada", "eddie", "vera", "root", "gone"}
    assert ">superuser</span>" in body and ">deactivated</span>" in body
    assert ">no role</span>" in body and ">editor</span>" in body
    assert 'href="/users/" aria-current="page">Users</a>' in body  # in the navigation
    assert "user-form" in ids(body)


@pytest.mark.parametrize("client_name", ["viewer_client", "editor_client"])
def test_users_are_for_admins(request, client_name, viewer):
    client = request.getfixturevalue(client_name)
    assert client.get("/users/").status_code == 403
    assert 'href="/users/"' not in text(client.get("/"))
    assert client.post("/users/", {"username": "x", "role": "admin"}).status_code == 403
    assert client.post("/users/vera/role/", {"role": "admin"}).status_code == 403
    assert client.post("/users/vera/active/", {"active": "0"}).status_code == 403
    assert not User.objects.filter(username="x").exists() and fresh(viewer).is_active


def test_an_admin_creates_a_login_with_a_password_and_a_refresh_creates_nothing(
    admin_role_client,
):
    resp = admin_role_client.post("/users/", {
        "username": "grace", "role": "editor",
        "password": "a long passphrase 42", "password2": "a long passphrase 42"})
    assert resp.status_code == 302 and resp["Location"] == "/users/"
    page = text(admin_role_client.get("/users/"))  # the browser's refresh is this GET
    assert "Created grace (editor); they can log in." in page
    grace = User.objects.get(username="grace")
    assert role_of(grace) == "editor" and User.objects.filter(username="grace").count() == 1
    assert can_log_in("grace", "a long passphrase 42")
    event = AuditEvent.objects.get(action="user_created")
    assert (event.actor, event.target, event.data) == (
        "ada", "user:grace", {"role": "editor", "password": "set"})


@pytest.mark.parametrize(("data", "field", "message"), [
    ({"username": "grace", "role": "editor", "password": "short", "password2": "short"},
     "password", "too short"),
    ({"username": "grace", "role": "editor", "password": "password123",
      "password2": "password123"}, "password", "too common"),
    ({"username": "grace", "role": "editor", "password": "a long passphrase 42",
      "password2": "another one 42"}, "password2", "The two passwords differ."),
    ({"username": "vera", "role": "editor"}, "username", "vera exists already"),
    ({"username": "bad name!", "role": "editor"}, "username", "Enter a valid username"),
    ({"username": "grace", "role": "root"}, "role", "Select a valid choice"),
])
def test_bad_input_is_an_inline_form_error(admin_role_client, viewer, data, field, message):
    users = User.objects.count()
    resp = admin_role_client.post("/users/", data)
    body = text(resp)
    assert resp.status_code == 400 and f"{field}-error" in ids(body) and message in body
    assert User.objects.count() == users and not AuditEvent.objects.exists()


def test_without_a_password_a_one_time_link_is_shown_once_and_works_once(admin_role_client):
    resp = admin_role_client.post("/users/", {"username": "grace", "role": "viewer"})
    assert resp.status_code == 302 and "reset" not in resp["Location"]
    shown = admin_role_client.get("/users/")
    link = next(a["value"] for t, a in tags(shown.content) if a.get("id") == "new-link")
    assert "no-store" in shown["Cache-Control"] and "/accounts/reset/" in link
    assert "new-link" not in ids(text(admin_role_client.get("/users/")))  # once
    grace = User.objects.get(username="grace")
    assert not grace.has_usable_password() and role_of(grace) == "viewer"

    person = Client()
    form = person.get(link, follow=True)
    assert "set-password" in ids(text(form)) and "new_password1" in text(form)
    done = person.post(form.redirect_chain[-1][0], {
        "new_password1": "my own passphrase 7", "new_password2": "my own passphrase 7"})
    assert done.status_code == 302
    assert can_log_in("grace", "my own passphrase 7")
    again = Client().get(link, follow=True)
    assert "This link no longer works" in text(again)


def test_a_role_change_asks_for_a_confirmation_first(admin_role_client, editor):
    asked = admin_role_client.get("/users/eddie/role/?role=admin")
    body = text(asked)
    assert asked.status_code == 200
    assert "Change <strong>eddie</strong> from <strong>editor</strong> to <strong>admin</strong>?" in body
    assert role_of(fresh(editor)) == "editor" and not AuditEvent.objects.exists()
    done = admin_role_client.post("/users/eddie/role/", {"role": "admin"})
    assert done.status_code == 302 and done["Location"] == "/users/"
    assert role_of(fresh(editor)) == "admin"
    assert "eddie is now admin (was editor)." in text(admin_role_client.get("/users/"))
    event = AuditEvent.objects.get(action="user_role_changed")
    assert event.data == {"role": "admin", "role_was": "editor"}


def test_the_rules_hold_for_roles_and_active_state(admin_role_client, admin_user, editor):
    root = User.objects.create_superuser("root", password="pw-root-long")
    for url, data, message in [
        ("/users/ada/role/", {"role": "viewer"}, "you cannot change your own role"),
        ("/users/ada/active/", {"active": "0"}, "you cannot change your own active state"),
        ("/users/root/role/", {"role": "viewer"}, "only a superuser may change a superuser"),
        ("/users/root/active/", {"active": "0"}, "only a superuser may change a superuser"),
        ("/users/eddie/role/", {"role": "editor"}, "eddie is editor already"),
    ]:
        resp = admin_role_client.post(url, data)
        assert resp.status_code in (400, 403) and message in text(resp), (url, resp.status_code)
    asked = admin_role_client.get("/users/ada/role/?role=viewer")
    assert asked.status_code == 403 and "role-error" in ids(text(asked))
    assert "Yes, make" not in text(asked)
    assert role_of(fresh(admin_user)) == "admin" and fresh(admin_user).is_active
    assert fresh(root).is_active and not AuditEvent.objects.exists()
    # A superuser may deactivate a superuser, and its role is not a group to change.
    other = User.objects.create_superuser("root2", password="pw-root-long")
    assert login(root).post("/users/root2/active/", {"active": "0"}).status_code == 302
    assert not fresh(other).is_active
    refused = login(root).post("/users/root2/role/", {"role": "viewer"})
    assert refused.status_code == 400 and "always admin" in text(refused)
    assert admin_role_client.post("/users/nobody/active/", {"active": "0"}).status_code == 404


def test_a_deactivated_users_tokens_stop_at_once_and_work_again_on_reactivation(
    admin_role_client, editor
):
    api = ApiClient(editor)
    assert api.get("/profiles").status_code == 200  # the token's row is cached now
    other_token = token_create(user=editor)
    assert token_user(other_token) == editor
    done = admin_role_client.post("/users/eddie/active/", {"active": "0"})
    assert done.status_code == 302 and not fresh(editor).is_active
    assert api.get("/profiles").status_code == 401 and token_user(other_token) is None
    assert not can_log_in("eddie", "pw-eddie")
    assert AuditEvent.objects.filter(action="user_deactivated").count() == 1
    assert admin_role_client.post("/users/eddie/active/", {"active": "1"}).status_code == 302
    assert api.get("/profiles").status_code == 200
    assert AuditEvent.objects.filter(action="user_activated").count() == 1
