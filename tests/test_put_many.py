"""The bulk path for new memories (``put_many.lua``: postings grouped by term across a call)
leaves Redis exactly as ``put.lua`` does, one memory at a time: every index key with the same
members, scores, fields and values, the hot-store hashes, the statistics, registries,
versions and one stream entry per memory; and it writes nothing where put.lua must do the
work (a memory Redis already holds, a reindex building a generation)."""

import random

import pytest

from memories import services, store
from memories.mirror import sync_memories, sync_memory
from memories.models import Memory
from search.index import fields as index_fields
from search.index import postings

WORDS = ["harbour", "pilot", "tide", "kumquat", "ledger", "invoice", "lantern", "orbit",
         "cedar", "copper", "willow", "signal", "meadow", "quartz", "ember", "杭州", "出差",
         "会员", "续费", "4月27号"]


def _items(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))
        item = {"content": f"{text} {i}", "conversation_id": f"c{i % 4}" if i % 5 else None}
        if i % 3:
            item["context"] = " ".join(rng.sample(WORDS, rng.randint(0, 6)))
        if i % 7 == 0:
            item["type"] = "short_term"
        out.append(item)
    return out


def _state(client, user_id: str) -> dict:
    """Every key of a namespace by its name without the namespace, with its whole value (a
    hash's fields as a dict: their order in the encoding is not part of the value); the
    stream as its entries' fields, and the hashes without ``indexed_at`` and ``user_id``."""
    base = store.namespace_base(user_id)
    out = {}
    for key in client.scan_iter(match=base + "*", count=5000):
        name = key[len(base):]
        kind = client.type(key)
        if kind == "zset":
            out[name] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "hash":
            out[name] = client.hgetall(key)
            if name.startswith("m:"):
                out[name].pop("indexed_at")
                out[name].pop("user_id")  # the twin's namespace
                out[name + " ttl"] = client.ttl(key) > 0
        elif kind == "set":
            out[name] = sorted(client.smembers(key))
        elif kind == "stream":
            out[name] = sorted(tuple(sorted(f.items())) for _, f in client.xrange(key))
        else:
            out[name] = client.get(key)
    return out


def _twin(redis_client, created, user_id: str) -> None:
    """Each created memory mirrored into ``user_id`` by put.lua, one memory per call, with
    the first namespace's reference lengths (set by its first bulk load)."""
    for field in index_fields.ANALYZERS:
        ref = redis_client.hget(store.key(created[0][0].user_id, field, "stats"), "avgdl_ref")
        redis_client.hset(store.key(user_id, field, "stats"), "avgdl_ref", ref)
    for memory, _ in created:
        twin = Memory.objects.get(memory_id=memory.memory_id)
        twin.user_id = user_id
        sync_memory(twin.memory_id, memory=twin)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", [3, 4])
def test_it_leaves_what_one_put_per_memory_leaves(builtins, redis_client, seed, monkeypatch):
    # A small budget: many calls, the same term in several of them, and a memory alone in a
    # call when it holds more postings than the budget.
    monkeypatch.setattr(postings, "PUT_MANY_POSTINGS_PER_CALL", 90)
    items = _items(150, seed)
    calls = []
    real = postings.queue_put_many
    monkeypatch.setattr(postings, "queue_put_many",
                        lambda pipe, puts, **kw: calls.append(len(puts)) or real(pipe, puts, **kw))
    created = services.memory_create_many(items=[{"user_id": "u-many", **it} for it in items])
    assert calls and set(calls) == {150}  # once more after loading the script
    assert all(not dup for _, dup in created)
    _twin(redis_client, created, "u-one")
    many, one = _state(redis_client, "u-many"), _state(redis_client, "u-one")
    assert many.keys() == one.keys()
    for name in many:
        assert many[name] == one[name], name
    for field in index_fields.ANALYZERS:
        stats = redis_client.hgetall(store.key("u-many", field, "stats"))
        dls = [sum(index_fields.field_term_frequencies(m.content, m.context)[field].values())
               for m, _ in created]
        dls = [d for d in dls if d]
        assert int(stats["N"]) == len(dls) and int(stats["total_len"]) == sum(dls), field


@pytest.mark.django_db(transaction=True)
def test_a_memory_redis_holds_already_goes_through_put_lua(builtins, redis_client):
    """A repeated mirror of new rows (a retry after a failure half-way): put_many.lua finds
    their versions and writes nothing, put.lua does the work, and Redis is left as one
    mirror leaves it (no posting, statistic or document counted twice)."""
    created = services.memory_create_many(items=[{"user_id": "u-again", **it}
                                                 for it in _items(40, seed=8)])
    rows = [m for m, _ in created]
    before = _state(redis_client, "u-again")
    stream = before.pop("stream")
    sync_memories([m.memory_id for m in rows], memories=rows, new=True)
    after = _state(redis_client, "u-again")
    assert sorted(after.pop("stream")) == sorted(stream + stream)  # one entry per put
    assert after == before


@pytest.mark.django_db(transaction=True)
def test_it_writes_nothing_where_put_lua_must_work(builtins, redis_client):
    memory = services.memory_create(user_id="u-hold", content="harbour pilot tide")[0]
    fresh = Memory.objects.get(memory_id=memory.memory_id)
    fresh.memory_id = "mem_00000000000000aa"
    args = {"user_id": "u-hold", "memory_id": fresh.memory_id, "version": 1,
            "hash_fields": {"content": fresh.content}, "filter_fields": {"#type": "long_term"},
            "fields": [postings.FieldTerms("c", {"harbour": 1})]}
    held = dict(args, memory_id=memory.memory_id)
    redis_client.script_load(postings._script("put_many.lua").script)
    for puts, building in (([args, held], False), ([args], True)):
        if building:
            redis_client.set(store.key("u-hold", "building"), "1")
        before = _state(redis_client, "u-hold")
        pipes = store.NamespacePipelines(redis_client)
        assert len(postings.queue_put_many(pipes.for_namespace("u-hold"), puts)) == 1
        pipes.execute()
        assert [postings.fell_back(r) for r in pipes.replies_for("u-hold")] == [True]
        assert _state(redis_client, "u-hold") == before
