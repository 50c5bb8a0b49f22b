"""Services are the one writer: each call leaves the DB row, its history, the Redis hash,
the postings and the statistics in line (on commit, in this process)."""

import pytest
from django.db import transaction

from memories import access, services
from memories.errors import Conflict, InvalidInput, NotFound, TooLarge
from memories.models import Memory
from search.index import fields as index_fields
from search.memory_search import memory_search
from tests.helpers import index_read, index_terms, indexed, memory_hash, postings_of, stats

# The PostgreSQL pass runs these (scripts/test -m postgres): the write paths' hand-written SQL.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def create(content, user_id="u-a", **kw):
    memory, dedup = services.memory_create(user_id=user_id, content=content, **kw)
    assert not dedup
    return memory


def test_it_creates_row_history_hash_postings_and_stats(admin_api):
    m = create("Team lunch is at Cafe Lumen on Fridays", importance=0.3, tags=["food"])
    row = Memory.objects.get(pk=m.memory_id)
    assert row.version == 1 and row.importance == 0.3 and row.tags == ["food"]
    assert [h.kind for h in row.history.all()] == ["create"]
    h = memory_hash("u-a", m.memory_id)
    assert h["content"] == m.content and h["version"] == "1" and h["user_id"] == "u-a"
    live = index_terms(admin_api, "u-a", "lumen")
    assert live["postings"] == {"lumen": [m.memory_id]} and live["df"] == {"lumen": 1}
    assert live["N"] == 1
    assert live["total_len"] == 5  # team lunch cafe lumen fridays


def test_it_reindexes_an_update_and_keeps_two_versions(admin_api):
    """Public case B05: update not reindexed."""
    m = create("Team lunch is at Cafe Lumen on Fridays")
    services.memory_update(memory_id=m.memory_id, content="Team lunch moved to Noodle Barn on Thursdays",
                           reason="moved")
    assert memory_search(user_id="u-a", query="Lumen", profile="bm25").results == []
    found = memory_search(user_id="u-a", query="Noodle", profile="bm25").results
    assert [h.memory_id for h in found] == [m.memory_id]
    assert memory_hash("u-a", m.memory_id)["content"] == "Team lunch moved to Noodle Barn on Thursdays"
    live = index_terms(admin_api, "u-a", "lumen", "noodle")
    assert live["df"] == {"lumen": 0, "noodle": 1}
    assert Memory.objects.get(pk=m.memory_id).history.count() == 2
    assert live["N"] == 1


def test_it_forgets_leaving_no_posting_and_restores(admin_api):
    """Public case B03: deleted memory still in BM25 postings."""
    m1 = create("use argon2 for password hashing")
    m2 = create("password reset links expire in 30 minutes")
    services.memory_forget(memory_id=m1.memory_id, reason="wrong")
    found = memory_search(user_id="u-a", query="password", limit=1, profile="bm25").results
    assert [h.memory_id for h in found] == [m2.memory_id]
    live = index_terms(admin_api, "u-a", "password", "argon2", "hashing")
    assert live["postings"] == {"password": [m2.memory_id], "argon2": [], "hashing": []}
    assert live["N"] == 1
    for field in index_fields.ANALYZERS:  # no field keeps a term of the forgotten memory
        assert not (postings_of("u-a", "argon2", field) | postings_of("u-a", "hash", field)
                    | postings_of("u-a", "hashing", field)), field
    assert memory_hash("u-a", m1.memory_id) == {}
    row = Memory.objects.get(pk=m1.memory_id)
    assert row.deleted_at is not None and row.version == 2
    services.memory_restore(memory_id=m1.memory_id, reason="was right")
    assert indexed(admin_api, "u-a", "argon2") == {m1.memory_id}
    assert index_terms(admin_api, "u-a", "password")["df"] == {"password": 2}
    assert [h.kind for h in Memory.objects.get(pk=m1.memory_id).history.order_by("history_date")] == [
        "create", "forget", "restore"]


def test_it_dedups_the_same_content_in_the_same_scope(builtins):
    m = create("User prefers dark mode")
    again, dedup = services.memory_create(user_id="u-a", content="User prefers dark mode")
    assert dedup and again.memory_id == m.memory_id
    other, dedup = services.memory_create(user_id="u-a", content="User prefers dark mode",
                                          conversation_id="c-1")
    assert not dedup and other.memory_id != m.memory_id
    assert Memory.objects.count() == 2


def test_it_rejects_too_long_content_and_writes_nothing(builtins, settings):
    """Public case B15: never success with truncation."""
    settings.MEMORY_MAX_CONTENT_CHARS = 65536
    text = "word " * 420 + "zephyrine"
    m = create(text)
    assert len(Memory.objects.get(pk=m.memory_id).content) == len(text)
    assert len(memory_hash("u-a", m.memory_id)["content"]) == len(text)
    assert [h.memory_id for h in memory_search(user_id="u-a", query="zephyrine").results] == [
        m.memory_id]
    with pytest.raises(TooLarge) as err:
        services.memory_create(user_id="u-a", content="x" * 100_000)
    assert "65536" in err.value.message and err.value.field == "content"
    assert Memory.objects.count() == 1


@pytest.mark.parametrize("bad", ["", " ", "\tx", "a\x00b", "x" * 129, 5])
def test_it_rejects_bad_user_ids(builtins, bad):
    with pytest.raises(InvalidInput) as err:
        services.memory_create(user_id=bad, content="hello")
    assert err.value.field == "user_id"
    assert Memory.objects.count() == 0


def test_it_answers_409_on_a_stale_version(builtins):
    m = create("alpha")
    services.memory_update(memory_id=m.memory_id, content="beta", expected_version=1)
    with pytest.raises(Conflict) as err:
        services.memory_update(memory_id=m.memory_id, content="gamma", expected_version=1)
    assert err.value.extra["current_version"] == 2
    assert Memory.objects.get(pk=m.memory_id).content == "beta"


def test_it_leaves_redis_untouched_when_the_transaction_rolls_back(builtins, redis_client):
    """Public case B26 (first half): the on-commit sync never runs for a rolled-back write."""
    with pytest.raises(RuntimeError), transaction.atomic():
        create("rolled back memory about zanzibar")
        raise RuntimeError("boom")
    assert Memory.objects.count() == 0
    assert postings_of("u-a", "zanzibar") == set()
    assert stats("u-a")["N"] == 0


def test_it_rolls_back_one_memory_only(builtins):
    """Public case B30: rollback reverts more than the target."""
    ms = [create(f"memory number {n} about rollback") for n in range(3)]
    for m in ms:
        services.memory_update(memory_id=m.memory_id, importance=0.9)
    access.access_record(user_id="u-a", memory_ids=[ms[0].memory_id])
    access.access_fold()
    services.memory_rollback(memory_id=ms[0].memory_id, version=1, reason="bad bulk edit")
    rows = {m.memory_id: Memory.objects.get(pk=m.memory_id) for m in ms}
    first = rows[ms[0].memory_id]
    assert first.importance == ms[0].importance and first.version == 3
    assert first.access_count == 1 and first.user_id == "u-a"
    assert [r.importance for r in list(rows.values())[1:]] == [0.9, 0.9]
    assert [r.version for r in list(rows.values())[1:]] == [2, 2]
    assert memory_hash("u-a", ms[0].memory_id)["version"] == "3"


def test_it_refuses_rollback_without_reason_or_to_a_future_version(builtins):
    m = create("alpha")
    services.memory_update(memory_id=m.memory_id, content="beta")
    with pytest.raises(InvalidInput):
        services.memory_rollback(memory_id=m.memory_id, version=1, reason=" ")
    with pytest.raises(InvalidInput):
        services.memory_rollback(memory_id=m.memory_id, version=2, reason="x")
    with pytest.raises(NotFound):
        services.memory_rollback(memory_id="mem_0000000000000000", version=1, reason="x")


def test_it_refuses_rollback_to_a_forget_or_restore_version(builtins):
    m = create("alpha")
    services.memory_update(memory_id=m.memory_id, content="beta")  # v2
    services.memory_forget(memory_id=m.memory_id, reason="wrong")  # v3
    services.memory_restore(memory_id=m.memory_id, reason="right after all")  # v4
    services.memory_update(memory_id=m.memory_id, content="gamma")  # v5
    for marker in (3, 4):
        with pytest.raises(InvalidInput, match="holds no content") as refused:
            services.memory_rollback(memory_id=m.memory_id, version=marker, reason="x")
        assert refused.value.field == "version"
    row = Memory.objects.get(pk=m.memory_id)
    assert (row.content, row.version, row.deleted_at) == ("gamma", 5, None)
    services.memory_rollback(memory_id=m.memory_id, version=2, reason="back to beta")
    assert Memory.objects.get(pk=m.memory_id).content == "beta"


def test_it_purges_content_and_keeps_an_audit_record(builtins):
    m = create("secret that must go")
    assert postings_of("u-a", "secret") == {m.memory_id}
    services.memory_purge(memory_id=m.memory_id, reason="gdpr")
    assert not Memory.objects.filter(pk=m.memory_id).exists()
    assert not Memory.history.filter(memory_id=m.memory_id).exists()
    assert memory_hash("u-a", m.memory_id) == {}
    for field in index_fields.ANALYZERS:  # its words left every field of the index
        assert postings_of("u-a", "secret", field) == set(), field
        assert index_read("u-a", "x", field=field)["N"] == 0
    from memories.models import AuditEvent
    event = AuditEvent.objects.get(action="purge")
    assert event.target == m.memory_id and "secret" not in str(event.data)


def test_it_marks_for_resync_when_redis_is_down(builtins, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    m, _ = services.memory_create(user_id="u-a", content="written while redis is down")
    assert Memory.objects.get(pk=m.memory_id).needs_resync
    settings.REDIS_URL = settings.REDIS_URL  # noqa: PLW0127 (restored by the fixture)
