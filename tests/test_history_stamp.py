"""A version's kind and actor reach its historical row through ``memories.history
.history_stamp`` (a context variable read by the ``pre_create_historical_record`` receiver),
not through attributes of the instance; a save outside any stamp is an edit by "system"."""

import threading

import pytest
from django.contrib.auth.models import User

from memories import services
from memories.history import history_stamp
from memories.models import ChangeKind, Memory

# The PostgreSQL pass runs these (scripts/test -m postgres): versions written under a row lock.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _versions(memory) -> list[tuple]:
    return list(Memory.history.filter(memory_id=memory.memory_id).order_by("version")
                .values_list("version", "history_type", "kind", "changed_by",
                             "history_change_reason", "history_user__username"))


def test_each_version_records_the_kind_actor_reason_and_user_of_its_service(builtins):
    alice = User.objects.create_user("alice")
    memory, _ = services.memory_create(user_id="u-s", content="first words", actor=alice,
                                       reason="said so")
    services.memory_update(memory_id=memory.memory_id, content="second words",
                           actor="nightly-job", reason="tidied")
    services.memory_forget(memory_id=memory.memory_id, actor=alice, reason="wrong")
    services.memory_restore(memory_id=memory.memory_id)
    assert _versions(memory) == [
        (1, "+", ChangeKind.CREATE, "alice", "said so", "alice"),
        (2, "~", ChangeKind.EDIT, "nightly-job", "tidied", None),
        (3, "~", ChangeKind.FORGET, "alice", "wrong", "alice"),
        (4, "~", ChangeKind.RESTORE, "system", "", None),
    ]
    assert not hasattr(Memory.objects.get(pk=memory.pk), "_history_kind")


def test_a_save_outside_a_stamp_is_an_edit_by_system_and_a_stamp_ends_with_its_block(
        builtins):
    memory, _ = services.memory_create(user_id="u-s", content="plain words")
    with pytest.raises(RuntimeError), history_stamp(kind=ChangeKind.ARCHIVE, actor="job"):
        raise RuntimeError
    memory.version += 1
    memory.save()
    assert _versions(memory)[-1][2:4] == (ChangeKind.EDIT, "system")


def test_a_stamp_is_seen_by_its_own_thread_only(builtins):
    memory, _ = services.memory_create(user_id="u-s", content="threaded words")
    seen = {}

    def other_thread():
        from memories.history import _stamp
        seen["other"] = _stamp.get()

    with history_stamp(kind=ChangeKind.CONSOLIDATE, actor=""):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        memory.version += 1
        memory.save()
    assert seen == {"other": None}
    assert _versions(memory)[-1][2:4] == (ChangeKind.CONSOLIDATE, "system")
