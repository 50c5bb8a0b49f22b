"""``memory_create`` reads a conversation memory's duplicate and its window of neighbours in
one statement (memories.services.create._duplicate_and_window), and a user-wide memory's
duplicate in one prepared statement (``_live_duplicate``): each must find exactly what the
ORM queries find (memories.services.context._neighbours and the dedup lookup), ties in
``created_at``, forgotten turns and NULL conversations included."""

import datetime as dt
import random

import pytest

from memories import services
from memories.models import Memory
from memories.services import context
from memories.services.create import _duplicate_and_window, _live_duplicate, build_memory

# The PostgreSQL pass runs these (scripts/test -m postgres): the raw SQL of the dedup lookup and
# the conversation window.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

T0 = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC)


def _orm_duplicate(memory: Memory) -> str | None:
    """The dedup lookup as an ORM query: the reference the prepared statements follow."""
    rows = Memory.objects.filter(
        user_id=memory.user_id, conversation_id=memory.conversation_id, type=memory.type,
        content_hash=memory.content_hash, deleted_at__isnull=True)
    oldest = min(rows, key=lambda m: (m.created_at, m.memory_id), default=None)
    return oldest and oldest.memory_id


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
        assert (existing and existing.memory_id) == _orm_duplicate(new)
        before, after = context._neighbours(new)
        assert [m.memory_id for m in window.before] == [m.memory_id for m in before]
        assert [m.memory_id for m in window.after] == [m.memory_id for m in after]
        assert window.context() == context.conversation_context(new)
        for m in [*window.before, *window.after]:
            assert m.deleted_at is None and m.context == Memory.objects.get(pk=m.pk).context


@pytest.mark.parametrize("seed", [1, 2])
def test_the_prepared_duplicate_check_finds_what_the_orm_query_finds(builtins, seed):
    """A NULL conversation matches user-wide rows only (``IS NULL``, as the ORM reads
    ``conversation_id=None``): never a conversation's row, and a conversation's lookup
    never a user-wide one. Oldest first, forgotten rows never."""
    rng = random.Random(seed)
    for _ in range(40):
        memory, _ = services.memory_create(
            user_id=rng.choice(["u-d", "u-e"]), conversation_id=rng.choice([None, "a", "b"]),
            type=rng.choice(["long_term", "working"]), content=f"note {rng.randint(0, 6)}",
            created_at=T0 + dt.timedelta(seconds=rng.randint(0, 5)))
        if rng.random() < 0.2:
            services.memory_forget(memory_id=memory.memory_id, reason="test")
    found = 0
    for _ in range(60):
        new = build_memory(user_id=rng.choice(["u-d", "u-e"]),
                           conversation_id=rng.choice([None, "a", "b"]),
                           type=rng.choice(["long_term", "working"]),
                           content=f"note {rng.randint(0, 8)}")
        existing = _live_duplicate(user_id=new.user_id, conversation_id=new.conversation_id,
                                   type=new.type, chash=new.content_hash)
        assert (existing and existing.memory_id) == _orm_duplicate(new)
        if existing is not None:
            found += 1
            assert existing.conversation_id == new.conversation_id
            assert existing.deleted_at is None
            assert existing == Memory.objects.get(pk=existing.pk)
    assert found  # the draw found duplicates, not only misses


def test_a_user_wide_create_dedups_against_user_wide_memories_only(builtins):
    in_conversation, _ = services.memory_create(user_id="u-n", conversation_id="c",
                                                content="same words")
    wide, dup = services.memory_create(user_id="u-n", content="same words")
    assert not dup and wide.conversation_id is None
    again, dup = services.memory_create(user_id="u-n", content="same words")
    assert dup and again.memory_id == wide.memory_id
    again, dup = services.memory_create(user_id="u-n", conversation_id="c", content="same words")
    assert dup and again.memory_id == in_conversation.memory_id
