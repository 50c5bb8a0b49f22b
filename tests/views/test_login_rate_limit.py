"""Login rate limiting: repeated failures lock the account out for a while."""

import pytest
from django.contrib.auth.models import User


@pytest.mark.django_db
def test_it_locks_out_after_repeated_failed_logins(client, settings):
    settings.AXES_FAILURE_LIMIT = 3
    User.objects.create_user("lena", password="right-password-123")
    for _ in range(3):
        resp = client.post("/accounts/login/", {"username": "lena", "password": "wrong"})
    assert resp.status_code == 429
    locked = client.post("/accounts/login/", {"username": "lena", "password": "right-password-123"})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_a_good_login_still_works(client):
    User.objects.create_user("omar", password="right-password-123")
    resp = client.post("/accounts/login/", {"username": "omar", "password": "right-password-123"})
    assert resp.status_code == 302
