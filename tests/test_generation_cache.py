"""The per-process row cache: a token, user, role or profile change reaches every process
with its next request; a cached token costs no query; Redis down means no cache, not errors."""

import time

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.models import ApiToken
from memories import generation_cache, generation_watch, services, store
from search import profile_services
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

KEY_KIND = "rowcache:generation"


def another_process_bumps(generation: str) -> None:
    """What ``generation_cache.bump`` does in another process: set the key, publish it."""
    client = store.get_client()
    client.set(store.global_key(KEY_KIND), generation)
    generation_watch.announce(client, generation)


def recall(api):
    return api.post("/recall", {"user_id": "u-a", "query": "lighthouse"})


@pytest.mark.django_db(transaction=True)  # a real commit: the row cache keeps nothing read in a transaction
def test_a_cached_token_costs_no_query(builtins, api, django_assert_max_num_queries):
    # A namespace with a memory the query does not find: an empty one asks the database
    # whether Redis lost its index (search.index_lost), a hit is checked against it.
    services.memory_create(user_id="u-a", content="harbour pilot")
    assert recall(api).status_code == 200
    with django_assert_max_num_queries(0):
        assert recall(api).status_code == 200


@pytest.mark.django_db(transaction=True)  # a real commit: the row cache keeps nothing read in a transaction
def test_a_revoke_in_another_process_reaches_this_one_at_once(builtins, api):
    assert recall(api).status_code == 200  # the token row is cached now
    # Another process revokes: the row changes, and its bump replaces the generation.
    ApiToken.objects.update(revoked_at=timezone.now())
    assert recall(api).status_code == 200, "served from the cache until the generation moves"
    another_process_bumps("from-another-process")
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
    another_process_bumps("changed-elsewhere")  # a change...
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


@pytest.mark.django_db(transaction=True)  # a real commit: the row cache keeps nothing read in a transaction
def test_a_request_reads_the_generation_once(builtins):
    """The token check and the profile lookup of one request share one GET; a later read
    sees a change made in between once its publication reaches this process's watch
    (at once on an idle machine; the wait is bounded by MEMORY_ROW_CACHE_VERIFY_SECONDS,
    so a loaded machine's late delivery does not make this test flaky)."""
    from django.core.signals import request_finished, request_started

    request_started.send(sender=None)
    try:
        assert generation_cache.cached("probe", lambda: "first") == "first"
        another_process_bumps("changed-by-another-process")
        assert generation_cache.cached("probe", lambda: "second") == "first"
    finally:
        request_finished.send(sender=None)
    deadline = time.monotonic() + settings.MEMORY_ROW_CACHE_VERIFY_SECONDS + 1
    while (generation_cache.cached("probe", lambda: "second") != "second"
           and time.monotonic() < deadline):
        time.sleep(0.01)
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


# The watch (memories.generation_watch): the generation without a GET per request.


@pytest.fixture
def reads(monkeypatch, settings):
    """How many times this process reads the generation key (each one a GET); no periodic
    read unless a test sets one, so every other read is the watch's doing."""
    settings.MEMORY_ROW_CACHE_VERIFY_SECONDS = 3600
    count = {"n": 0}
    real = generation_cache._read_generation

    def counted():
        count["n"] += 1
        return real()

    monkeypatch.setattr(generation_cache, "_read_generation", counted)
    generation_watch.forget()
    yield count
    generation_watch.forget()


def watched(api=None):
    """Requests (or generation reads) until the watch's subscription is confirmed and the key
    read after it: from then on it vouches for the generation."""
    for _ in range(200):
        if api is not None:
            assert recall(api).status_code == 200
        else:
            generation_cache._generation()
        if generation_watch._watch["confirmed"] and generation_watch._watch["verified"] > 0:
            return
        time.sleep(0.01)
    raise AssertionError("the watch was never confirmed")


def test_a_watched_generation_costs_no_read_per_request(builtins, api, reads):
    watched(api)
    first = reads["n"]
    assert 1 <= first <= 3  # before the confirmation came, and once after it
    for _ in range(5):
        assert recall(api).status_code == 200
    assert reads["n"] == first
    another_process_bumps("moved")
    assert generation_cache._generation() == "moved"  # learnt from the publication
    assert reads["n"] == first


@pytest.mark.django_db(transaction=True)  # a real commit: another process reads the rows
def test_a_bump_in_a_real_second_process_reaches_this_one_at_once(builtins, api, reads):
    import os
    import subprocess
    import sys

    from django.conf import settings

    watched(api)  # watched and cached now
    reads["n"] = 0
    ApiToken.objects.update(revoked_at=timezone.now())  # committed: the other process sees it
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memory_console.settings_test",
           "MEMORY_KEY_PREFIX": settings.MEMORY_KEY_PREFIX, "REDIS_URL": settings.REDIS_URL}
    subprocess.run([sys.executable, "-c", "import django; django.setup(); "
                    "from memories import generation_cache; generation_cache._bump_now()"],
                   env=env, check=True, timeout=120)
    assert recall(api).status_code == 401
    assert reads["n"] == 0, "seen through the watch, not by reading the key"


def test_a_broken_watch_reads_the_key_and_misses_nothing(builtins, reads):
    watched()
    # The watch's connection dies; a bump happens while nobody listens on it.
    port = generation_watch._watch["pubsub"].connection._sock.getsockname()[1]
    node = generation_watch._node_client(store.get_client())
    mine = [c for c in node.client_list(_type="pubsub") if c["addr"].endswith(f":{port}")]
    assert len(mine) == 1
    node.client_kill_filter(_id=mine[0]["id"])
    another_process_bumps("while-deaf")
    before = reads["n"]
    assert generation_cache._generation() == "while-deaf"
    assert reads["n"] == before + 1


def test_a_key_set_without_publishing_is_read_within_the_verify_interval(builtins, reads,
                                                                         settings, monkeypatch):
    settings.MEMORY_ROW_CACHE_VERIFY_SECONDS = 5
    clock = {"t": 1000.0}
    monkeypatch.setattr(generation_watch, "_now", lambda: clock["t"])
    watched()
    before = generation_cache._generation()
    store.get_client().set(store.global_key(KEY_KIND), "silent-set")  # e.g. an older release
    clock["t"] += 4.9
    assert generation_cache._generation() == before  # trusted for up to 5 s
    clock["t"] += 0.2
    assert generation_cache._generation() == "silent-set"
    settings.MEMORY_ROW_CACHE_VERIFY_SECONDS = 0
    store.get_client().set(store.global_key(KEY_KIND), "silent-again")
    assert generation_cache._generation() == "silent-again"


@pytest.mark.django_db(transaction=True)  # a real commit: another process reads the rows
def test_a_forked_child_watches_on_its_own_connection(builtins, reads):
    """A child must not read its parent's subscription: each sees every bump."""
    import os

    watched()  # the parent's watch vouches
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own watch, then the bump the parent makes
        try:
            generation_cache._generation()
            os.write(ready_w, b"1")
            os.read(go_r, 1)
            os.write(out_w, generation_cache._generation().encode())
        finally:
            os._exit(0)
    os.read(ready_r, 1)
    another_process_bumps("after-fork")
    os.write(go_w, b"1")
    assert os.read(out_r, 100) == b"after-fork"
    os.waitpid(pid, 0)
    assert generation_cache._generation() == "after-fork"
