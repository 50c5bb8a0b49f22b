"""``memory_create`` and ``memory_create_many`` insert memories and their first history
versions with simple-history's ``bulk_create_with_history``
(``memories.services.create._insert_with_history``) instead of ``save()`` and
simple-history's ``post_save``: it writes the rows that save writes (every column of the
memory and of its history version but the history row's own id, and its date bracketed),
and does what that save's receivers did, which are the only ones connected: the metrics
count one write per memory created, on commit, and none for a rollback."""

import datetime as dt
import types

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import signals
from django.utils import timezone
from simple_history import signals as history_signals
from simple_history.models import HistoricalRecords

from integrations.metrics import receivers as metrics_receivers
from integrations.metrics.registry import MEMORY_WRITES
from memories import history as memories_history
from memories import services
from memories.history import history_stamp
from memories.models import ChangeKind, Memory
from memories.services.create import _insert_with_history, build_memory

# The PostgreSQL pass runs these (scripts/test -m postgres): the bulk INSERTs of a create.
pytestmark = pytest.mark.postgres

FIELDS = {"content": "Alice prefers tea, not coffee", "tags": ["drinks", "茶"],
          "metadata": {"dia_id": "D1:3", "nested": {"x": [1, 2.5, None, True]}},
          "keywords": ["tea"], "source": "agent", "author": "alice", "importance": 0.7,
          "created_at": dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC)}


def _built(tag: str, now, **extra) -> Memory:
    memory = build_memory(user_id=f"u-{tag}", now=now, **{**FIELDS, **extra})
    memory.memory_id = f"mem_{tag}{0:015x}"
    return memory


def _rows(user_id: str) -> tuple[dict, dict]:
    row = Memory.objects.filter(user_id=user_id).values().get()
    version = Memory.history.filter(user_id=user_id).values().get()
    for r in (row, version):
        r.pop("memory_id"), r.pop("user_id"), r.pop("history_id", None)
    return row, version


def _writes(kind: str) -> float:
    return MEMORY_WRITES.labels(kind=kind)._value.get()


CASES = {
    # actor, kind, reason, extra fields, request user (simple-history's middleware)
    "user with a reason": ("user", ChangeKind.CREATE, "learnt in chat", {}, None),
    "user, conversation, promote": ("user", ChangeKind.PROMOTE, "", {
        "conversation_id": "c1", "type": "short_term", "ttl_seconds": 600,
        "context": "Bob: hi"}, None),
    "job name under a request": ("consolidation", ChangeKind.CONSOLIDATE, "merged", {},
                                 "user"),
    "no actor, no request": (None, ChangeKind.CREATE, "", {}, None),
    "empty actor name": ("", ChangeKind.CREATE, "", {}, None),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(CASES))
def test_it_writes_what_the_orm_save_writes(builtins, django_capture_on_commit_callbacks,
                                            case):
    actor, kind, reason, extra, request_user = CASES[case]
    user = User.objects.create_user("alice")
    actor = user if actor == "user" else actor
    now = timezone.now()
    if request_user:
        HistoricalRecords.context.request = types.SimpleNamespace(user=user)
    try:
        before = _writes(kind)
        with django_capture_on_commit_callbacks(execute=True):
            started = timezone.now()
            orm = _built("a", now, **extra)
            orm._change_reason = reason
            if actor == user:
                orm._history_user = user
            with history_stamp(kind=kind, actor=actor):
                orm.save(force_insert=True)  # a save, as simple-history documents it
            middle = timezone.now()
            ours = _built("b", now, **extra)
            _insert_with_history([ours], kind=kind, actor=actor, reason=reason)
            ended = timezone.now()
        assert _writes(kind) == before + 2  # one count each, on commit
    finally:
        if request_user:
            del HistoricalRecords.context.request
    (row_a, version_a), (row_b, version_b) = _rows("u-a"), _rows("u-b")
    assert started <= version_a.pop("history_date") <= middle
    assert middle <= version_b.pop("history_date") <= ended
    assert row_b == row_a
    assert version_b == version_a
    assert version_b["history_type"] == "+" and version_b["kind"] == kind
    assert version_b["history_change_reason"] == reason
    assert version_b["changed_by"] == (actor.username if actor == user else actor or "system")
    assert version_b["history_user_id"] == (user.pk if actor == user or request_user else None)
    assert not ours._state.adding and ours._state.db == connection.alias


def _receivers(signal, sender) -> list:
    sync, async_ = signal._live_receivers(sender)
    return [*sync, *async_]


def test_the_receivers_it_stands_in_for_are_the_only_ones():
    """A receiver connected to a Memory save or to its history versions would no longer run
    for a create: reproduce it in ``_insert_with_history`` and add it here."""
    historical = Memory.history.model
    post_save = _receivers(signals.post_save, Memory)
    assert len(post_save) == 1 and post_save[0].__func__ is HistoricalRecords.post_save
    for signal in (signals.pre_save, signals.pre_init, signals.post_init):
        assert _receivers(signal, Memory) == [], signal
    for signal in (signals.pre_save, signals.post_save, signals.pre_init, signals.post_init):
        assert _receivers(signal, historical) == [], signal
    assert _receivers(history_signals.pre_create_historical_record, historical) == [
        memories_history.stamp_history_row]
    assert _receivers(history_signals.post_create_historical_record, historical) == [
        metrics_receivers._count]


@pytest.mark.django_db
def test_each_memory_created_counts_one_write_on_commit(builtins,
                                                        django_capture_on_commit_callbacks):
    before = _writes(ChangeKind.CREATE)
    with django_capture_on_commit_callbacks(execute=True):
        services.memory_create(user_id="u-count", content="one single create")
    assert _writes(ChangeKind.CREATE) == before + 1
    with django_capture_on_commit_callbacks(execute=True):
        services.memory_create(user_id="u-count", content="one single create")  # a duplicate
    assert _writes(ChangeKind.CREATE) == before + 1
    items = [{"user_id": "u-count", "content": text}
             for text in ("bulk one", "bulk two", "bulk one", "one single create", "bulk 3")]
    with django_capture_on_commit_callbacks(execute=True):
        out = services.memory_create_many(items=items)
    assert [deduplicated for _, deduplicated in out] == [False, False, True, True, False]
    assert _writes(ChangeKind.CREATE) == before + 4
    assert Memory.history.filter(user_id="u-count", history_type="+").count() == 4


@pytest.mark.django_db
def test_a_create_rolled_back_counts_nothing(builtins):
    before = _writes(ChangeKind.CREATE)
    with pytest.raises(RuntimeError), transaction.atomic():
        services.memory_create(user_id="u-rollback", content="never committed")
        services.memory_create_many(items=[{"user_id": "u-rollback", "content": "nor this"}])
        raise RuntimeError
    assert _writes(ChangeKind.CREATE) == before
    assert not Memory.objects.filter(user_id="u-rollback").exists()
