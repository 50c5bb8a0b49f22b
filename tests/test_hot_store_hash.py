"""The hot-store hash leaves its empty fields out (index format 7: about 500 bytes a memory
less) and every reader takes an absent field as empty: a recall answers such a memory, with
every filter, as it answered when the fields were stored empty."""

import pytest

from memories import services, store
from search.memory_search import memory_search
from tests.helpers import create

pytestmark = pytest.mark.django_db

OPTIONAL = ("conversation_id", "author", "agent_id", "run_id", "accessed_at", "expire_at",
            "valid_until", "superseded_by")


def _hash(memory_id: str) -> dict[str, str]:
    raw = store.get_client().hgetall(store.key("u-a", "m", memory_id))
    return {store.text(k): store.text(v) for k, v in raw.items()}


def test_a_memory_hash_holds_no_empty_field_and_recall_reads_them_as_empty(builtins):
    bare = create("kestrel nest on the north cliff").memory_id
    scoped, _ = services.memory_create(user_id="u-a", content="kestrel chicks fledged",
                                       conversation_id="conv-1", author="ranger",
                                       agent_id="bird-bot", run_id="r1")
    held = _hash(bare)
    assert "" not in held.values()
    assert not set(OPTIONAL) & held.keys()
    assert {"conversation_id", "author", "agent_id", "run_id"} <= _hash(scoped.memory_id).keys()
    for profile in ("bm25", None):  # a lean window and one ranked on the hashes' fields
        found = memory_search(user_id="u-a", query="kestrel", limit=5, profile=profile)
        got = {h.memory_id: h for h in found.results}
        assert got.keys() == {bare, scoped.memory_id}
        assert got[bare].conversation_id is None and got[bare].valid_until is None
    # Filters on a field the hash left out: the memory has none of it.
    assert [h.memory_id for h in memory_search(user_id="u-a", query="kestrel", author="ranger",
                                               profile="bm25").results] == [scoped.memory_id]
    assert [h.memory_id for h in memory_search(user_id="u-a", query="kestrel",
                                               agents=["bird-bot"]).results] == [scoped.memory_id]
    assert [h.memory_id for h in memory_search(user_id="u-a", query="kestrel",
                                               run_id="r1").results] == [scoped.memory_id]
