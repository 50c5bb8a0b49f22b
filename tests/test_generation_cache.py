"""The per-process row cache: a token, user, role or profile change reaches every process
with its next request; a cached token costs no query; Redis down means no cache, not errors."""

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.models import ApiToken
from memories import generation_cache, services, store
from search import profile_services
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


def recall(api):
    return api.post("/recall", {"user_id": "u-a", "query": "lighthouse"})


def test_a_cached_token_costs_no_query(builtins, api, django_assert_max_num_queries):
    assert recall(api).status_code == 200
    with django_assert_max_num_queries(0):
        assert recall(api).status_code == 200


def test_a_revoke_in_another_process_reaches_this_one_at_once(builtins, api):
    assert recall(api).status_code == 200  # the token row is cached now
    # Another process revokes: the row changes, and its bump replaces the generation.
    ApiToken.objects.update(revoked_at=timezone.now())
    assert recall(api).status_code == 200, "served from the cache until the generation moves"
    store.get_client().set(store.global_key("rowcache:generation"), "from-another-process")
    assert recall(api).status_code == 401


def test_revoking_deactivating_and_losing_a_role_apply_to_the_next_request(builtins, editor):
    api = ApiClient(editor)
    assert api.post("/memories", {"user_id": "u-a", "content": "a lighthouse"}).status_code == 201
    editor.groups.remove(Group.objects.get(name="editor"))
    editor.groups.add(Group.objects.get(name="viewer"))
    assert api.post("/memories", {"user_id": "u-a", "content": "lighthouse 2"}).status_code == 403
    assert recall(api).status_code == 200
    editor.is_active = False
    editor.save()
    assert recall(api).status_code == 401
    editor.is_active = True
    editor.save()
    assert recall(api).status_code == 200
    prefix = ApiToken.objects.get(user=editor).prefix
    from accounts.tokens import token_revoke

    assert token_revoke(prefix=prefix) == 1
    assert recall(api).status_code == 401


def test_a_saved_profile_is_used_by_the_next_recall(builtins, api, admin_user):
    services.memory_create(user_id="u-a", content="the lighthouse keeper logs the weather")
    before = recall(api).json()
    assert before["profile"] == "context"
    profile_services.profile_update(actor=admin_user, name="bm25", is_default=True)
    assert recall(api).json()["profile"] == "bm25"


def test_with_redis_down_tokens_and_profiles_load_from_the_database(builtins, api, settings):
    assert recall(api).status_code == 200
    store._client.cache_clear()
    live, settings.REDIS_URL = settings.REDIS_URL, "redis://127.0.0.1:1/0"
    try:
        response = api.get("/memories/mem_0000000000000000")
        assert response.status_code == 404  # authenticated from the database, then not found
        assert generation_cache._state["entries"] == {}
    finally:
        store._client.cache_clear()
        settings.REDIS_URL = live


def test_a_flushed_generation_never_matches_a_cache_from_before(builtins):
    client = store.get_client()
    client.delete(store.global_key("rowcache:generation"))
    assert generation_cache.cached("k", lambda: "v1") == "v1"
    client.set(store.global_key("rowcache:generation"), "changed-elsewhere")  # a change...
    client.delete(store.global_key("rowcache:generation"))  # ...then a flush
    assert generation_cache.cached("k", lambda: "v2") == "v2"


def test_nothing_read_inside_a_rolled_back_transaction_stays_cached(builtins):
    from django.db import transaction

    from search.models import RankingProfile
    from search.profiles import profile_resolve

    saved_k1 = RankingProfile.objects.get(name="bm25").k1
    with pytest.raises(RuntimeError), transaction.atomic():
        profile = RankingProfile.objects.get(name="bm25")
        profile.k1 = 2.5
        profile.save()
        assert profile_resolve("bm25").k1 == 2.5
        raise RuntimeError("roll back")
    assert profile_resolve("bm25").k1 == saved_k1


def test_a_request_reads_the_generation_once(builtins):
    """The token check and the profile lookup of one request share one GET; the next
    request sees a change made in between."""
    from django.core.signals import request_finished, request_started

    key = store.global_key("rowcache:generation")
    request_started.send(sender=None)
    try:
        assert generation_cache.cached("probe", lambda: "first") == "first"
        store.get_client().set(key, "changed-by-another-process")
        assert generation_cache.cached("probe", lambda: "second") == "first"
    finally:
        request_finished.send(sender=None)
    assert generation_cache.cached("probe", lambda: "second") == "second"


def test_a_change_made_by_the_request_itself_is_seen_at_once(builtins):
    from django.core.signals import request_finished, request_started

    request_started.send(sender=None)
    try:
        assert generation_cache.cached("probe", lambda: "first") == "first"
        generation_cache.bump()  # no transaction: at once
        assert generation_cache.cached("probe", lambda: "second") == "second"
    finally:
        request_finished.send(sender=None)
