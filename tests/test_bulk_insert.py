"""``memories.services.bulk_insert`` writes the rows ``bulk_create_with_history`` writes: every column
of each memory and of its history version (all but the history row's own id)."""

import datetime as dt

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from memories.models import ChangeKind, Memory
from memories.services.bulk_insert import memories_create_with_history
from memories.services.create import build_memory

# The PostgreSQL pass runs these (scripts/test -m postgres): the hand-written executemany INSERTs
# per engine.
pytestmark = pytest.mark.postgres


def _built(now, tag: str) -> list[Memory]:
    items = [
        {"content": "Alice prefers tea", "conversation_id": "c1", "tags": ["drinks", "茶"],
         "metadata": {"dia_id": "D1:3", "nested": {"x": [1, 2.5, None, True]}},
         "keywords": ["tea"], "source": "import", "author": "alice",
         "created_at": dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC), "context": "Bob: hi"},
        {"content": "会员续费 4月27号", "type": "short_term", "ttl_seconds": 3600,
         "importance": 0.25},
        {"content": "plain note", "type": "working", "context": "", "importance": 1.0},
    ]
    out = []
    for n, item in enumerate(items):
        memory = build_memory(user_id=f"u-{tag}", now=now, **item)
        memory.memory_id = f"mem_{tag}{n:015x}"
        out.append(memory)
    return out


def _rows(user_id: str) -> tuple[list[dict], list[dict]]:
    def strip(row):
        row.pop("memory_id"), row.pop("user_id"), row.pop("history_id", None)
        return row
    rows = [strip(r) for r in Memory.objects.filter(user_id=user_id)
            .order_by("memory_id").values()]
    history = [strip(r) for r in Memory.history.filter(user_id=user_id)
               .order_by("memory_id").values()]
    return rows, history


@pytest.mark.django_db
@pytest.mark.parametrize("with_user", [True, False])
def test_it_writes_what_bulk_create_with_history_writes(builtins, with_user):
    actor = User.objects.create_user("importer") if with_user else None
    now = timezone.now()
    attrs = {"kind": ChangeKind.CREATE, "changed_by": "importer"}
    ours = _built(now, "a")
    memories_create_with_history(ours, default_change_reason="import", default_date=now,
                                 custom_historical_attrs=attrs, default_user=actor)
    bulk_create_with_history(_built(now, "b"), Memory, batch_size=500,
                             default_change_reason="import", default_date=now,
                             custom_historical_attrs=attrs, default_user=actor)
    assert _rows("u-a") == _rows("u-b")
    rows, history = _rows("u-a")
    assert len(rows) == len(history) == 3
    assert {h["history_type"] for h in history} == {"+"}
    assert {h["history_user_id"] for h in history} == {actor.pk if actor else None}
    assert all(not m._state.adding for m in ours)  # saved: a later save() updates
