"""``memory_create`` reads a conversation memory's duplicate and its window of neighbours in
one statement (memories.services.create._duplicate_and_window): it must find exactly what
the separate ORM queries find (memories.services.context._neighbours and the dedup lookup),
ties in ``created_at`` and forgotten turns included."""

import datetime as dt
import random

import pytest

from memories import services
from memories.models import Memory
from memories.services import context
from memories.services.create import _duplicate_and_window, _live_duplicate, build_memory

pytestmark = pytest.mark.django_db(transaction=True)

T0 = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_statement_finds_what_the_three_queries_find(builtins, seed):
    rng = random.Random(seed)
    for _ in range(30):
        at = T0 + dt.timedelta(seconds=rng.randint(0, 12))  # many turns share a second
        memory, _ = services.memory_create(user_id="u-w", conversation_id=rng.choice("ab"),
                                           content=f"turn {rng.randint(0, 20)}", created_at=at)
        if rng.random() < 0.15:
            services.memory_forget(memory_id=memory.memory_id, reason="test")
    services.memory_create(user_id="u-w", conversation_id=None, content="turn 3")
    services.memory_create(user_id="u-other", conversation_id="a", content="turn 4")
    for _ in range(40):
        new = build_memory(user_id="u-w", conversation_id=rng.choice("ab"),
                           content=f"turn {rng.randint(0, 25)}",
                           created_at=T0 + dt.timedelta(seconds=rng.randint(-1, 13)))
        existing, window = _duplicate_and_window(new)
        want = _live_duplicate(user_id=new.user_id, conversation_id=new.conversation_id,
                               type=new.type, chash=new.content_hash)
        assert (existing and existing.memory_id) == (want and want.memory_id)
        before, after = context._neighbours(new)
        assert [m.memory_id for m in window.before] == [m.memory_id for m in before]
        assert [m.memory_id for m in window.after] == [m.memory_id for m in after]
        assert window.context() == context.conversation_context(new)
        for m in [*window.before, *window.after]:
            assert m.deleted_at is None and m.context == Memory.objects.get(pk=m.pk).context
