"""Several memories per ``put.lua`` call (bulk writes, reindex) leave Redis exactly as one
call per memory does: the same records, statistics, id set and versions; and a call never
holds more than its budget of record entries."""

import contextlib
import random

import pytest

from memories import services, store
from memories.errors import ServiceError
from memories.mirror import sync_memories, sync_memory
from memories.models import Memory
from search.index import fields as index_fields
from search.index import postings

WORDS = ["harbour", "pilot", "tide", "kumquat", "ledger", "invoice", "lantern", "orbit", "cedar", "copper", "willow", "signal", "meadow", "quartz", "ember", "杭州", "出差", "会员", "续费", "4月27号"]


def _items(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25)))
        out.append({"content": f"{text} {i}", "context": " ".join(rng.sample(WORDS, 4)),
                    "conversation_id": f"c{i % 3}"})
    return out


def _state(client, user_id: str) -> dict:
    """Every index key of a namespace, by its name without the namespace, with its value."""
    base = store.namespace_base(user_id)
    out = {}
    for key in client.scan_iter(match=base + "*", count=5000):
        name = key[len(base):]
        kind = client.type(key)
        if name in ("stream", "format") or name.startswith("m:"):
            continue
        if kind == "zset":
            out[name] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "hash":
            out[name] = client.hgetall(key)
        elif kind == "string":
            out[name] = client.get(key)
        elif kind == "set":
            out[name] = sorted(client.smembers(key))
        else:
            out[name] = client.get(key)
    return out


@pytest.mark.django_db
def test_many_memories_per_call_equal_one_call_per_memory(builtins, redis_client):
    items = _items(120, seed=3)
    # Same ids in both namespaces, so the states compare key for key.
    created = services.memory_create_many(items=[{"user_id": "u-many", **it} for it in items])
    for memory, _ in created:
        twin = Memory.objects.get(memory_id=memory.memory_id)
        twin.user_id = "u-one"
        sync_memory(twin.memory_id, memory=twin)
    many, one = _state(redis_client, "u-many"), _state(redis_client, "u-one")
    assert many.keys() == one.keys()
    for name in many:
        assert many[name] == one[name], name
    # Re-mirroring every memory again, many per call (old records read, new written), changes
    # nothing either, and the statistics stay exact.
    sync_memories([m.memory_id for m, _ in created])
    assert _state(redis_client, "u-many") == many
    for field in index_fields.ANALYZERS:
        stats = redis_client.hgetall(store.key("u-many", field, "stats"))
        dls = [sum(index_fields.field_term_frequencies(it["content"], it["context"])[field]
                   .values()) for it in items]
        dls = [d for d in dls if d]
        assert int(stats["N"]) == len(dls) and int(stats["total_len"]) == sum(dls), field


def test_a_call_stays_within_its_budget_of_record_bytes():
    def put(i, n_terms, user="u"):
        tf = {f"t{j}": 1 for j in range(n_terms)}
        text = index_fields.record_text(tf, {}, {"type": "long_term"})
        return {"user_id": user, "memory_id": f"mem_{i:016x}", "version": 1,
                "hash_fields": {}, "record": postings.Record(text)}

    puts = [put(i, 900) for i in range(20)] + [put(99, 5000)] + [put(0, 5)]
    batches = postings.put_batches(puts)
    assert len(batches) > 3
    for batch in batches:
        total = sum(len(p["record"].text) for p in batch)
        assert total <= postings.PUT_BYTES_PER_CALL or len(batch) == 1
        assert len({p["memory_id"] for p in batch}) == len(batch)  # distinct ids per call
    assert [p["memory_id"] for b in batches for p in b] == [p["memory_id"] for p in puts]


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [5, 6])
def test_rewrites_that_keep_unchanged_postings_leave_what_one_fresh_put_leaves(
        builtins, redis_client, seed):
    """After conversation turns (each rebuilds its predecessors' contexts), edits that keep,
    grow or shrink a text, forgets and restores, every record, statistic, version and the id
    set equal what one put of each final row gives a fresh namespace."""
    rng = random.Random(seed)
    ids = []
    for n in range(40):
        op = rng.random()
        if op < 0.55 or len(ids) < 3:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
            memory, _ = services.memory_create(user_id="u-live", content=f"{text} {n}",
                                               conversation_id=f"c{n % 2}")
            ids.append(memory.memory_id)
        elif op < 0.75:
            memory = Memory.objects.get(memory_id=rng.choice(ids))
            if memory.deleted_at is None:
                words = memory.content.split()
                keep = words[:rng.randint(1, len(words))] + rng.sample(WORDS, rng.randint(0, 3))
                services.memory_update(memory_id=memory.memory_id, content=" ".join(keep),
                                       reason="edit")
        else:
            change = services.memory_forget if op < 0.9 else services.memory_restore
            # Forgotten already, live already, or its text taken: refused, nothing written.
            with contextlib.suppress(ServiceError):
                change(memory_id=rng.choice(ids), reason="test")
    for memory in Memory.objects.filter(user_id="u-live"):
        memory.user_id = "u-fresh"
        sync_memory(memory.memory_id, memory=memory)
    live, fresh = _state(redis_client, "u-live"), _state(redis_client, "u-fresh")
    # Every key (records, statistics, versions, ids) is the same; no record of a forgotten
    # memory remains.
    assert live.keys() == fresh.keys()
    for name in live:
        assert live[name] == fresh[name], name


@pytest.mark.django_db
def test_a_removal_deletes_the_record_of_a_generation_no_longer_written(builtins, redis_client):
    """A generation's records are found through ``ids`` when it is deleted: a memory removed
    while a generation is no longer written (swapped out by a reindex, or left half-built by
    a builder that died) takes its record there with it, or it would stay for good."""
    redis_client.set(store.key("u-gen", "building"), "5")  # a reindex building generation 5
    memory, _ = services.memory_create(user_id="u-gen", content="kestrel over the quarry")
    old = store.key("u-gen", "v@5", "d", memory.memory_id)
    assert redis_client.exists(old)  # written to both generations
    redis_client.delete(store.key("u-gen", "building"))  # the builder is gone
    services.memory_forget(memory_id=memory.memory_id)
    assert not redis_client.exists(old)
    assert not redis_client.exists(store.key("u-gen", "v", "d", memory.memory_id))
