"""``Memory.history`` builds its manager class once (memories.history._OneManagerClass) and
answers as simple-history's own descriptor does: per instance and for the model."""

import pytest

from memories import services
from memories.models import Memory

# The PostgreSQL pass runs these (scripts/test -m postgres): versions written under a row lock.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_the_history_manager_class_is_built_once_and_reads_the_versions(builtins):
    memory, _ = services.memory_create(user_id="u-h", content="first words")
    services.memory_update(memory_id=memory.memory_id, content="second words", reason="edit")
    one, two = Memory.objects.get(pk=memory.pk), Memory.objects.get(pk=memory.pk)
    assert type(one.history) is type(two.history) is type(Memory.history)
    assert [h.content for h in one.history.order_by("history_date")] == [
        "first words", "second words"]
    assert one.history.instance == one
    assert Memory.history.filter(memory_id=memory.memory_id).count() == 2
