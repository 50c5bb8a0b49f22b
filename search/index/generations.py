"""Deleting one index generation of a namespace without scanning the keyspace.

A generation (``<sfx>``: ``""`` for 0, ``@N`` for N) holds one record per memory
(``v<sfx>:d:<id>``) and each field's statistics (``<field><sfx>:stats``). Every memory
with a record is in the namespace's ``ids`` set (put.lua adds a memory there when it writes
its record and removes both together), so deleting a generation walks ``ids`` (SSCAN of
one set) and costs the generation's own keys: nothing of another namespace, and no keyspace
SCAN (which walks every key of the server).

A generation of format 6 or older (one document vector per field, ``<field><sfx>:d:<id>``,
and one sorted set per term, ``<field><sfx>:t:<term>``) recorded both in registries
(``<field><sfx>:docs``, ``<field><sfx>:terms``), which name its keys; one written before
those registries existed is found by one SCAN of its own pattern, once.
"""

import logging

from memories import store
from search.index import fields as index_fields

log = logging.getLogger(__name__)

BATCH = 1000


def suffix(gen: int) -> str:
    """Key suffix of a generation: ``""`` for 0, ``@N`` otherwise."""
    return "" if gen == 0 else f"@{gen}"


def _delete_keys(client, keys) -> int:
    """DEL the keys of an iterable in batches of ``BATCH``; returns how many existed."""
    deleted, batch = 0, []
    for key in keys:
        batch.append(key)
        if len(batch) >= BATCH:
            deleted += client.delete(*batch)
            batch = []
    if batch:
        deleted += client.delete(*batch)
    return deleted


def _delete_members(client, registry: str, key_of) -> int:
    return _delete_keys(client, (key_of(store.text(member))
                                 for member in client.sscan_iter(registry, count=BATCH)))


def generation_delete(client, user_id: str, gen: int) -> int:
    """Delete every key of generation ``gen`` of namespace ``user_id``; returns how many.
    Raises RedisError."""
    base = store.namespace_base(user_id)
    records = f"{base}v{suffix(gen)}:d:"
    deleted = _delete_members(client, store.key(user_id, "ids"), lambda m: records + m)
    client.srem(store.key(user_id, "fields"), "v" + suffix(gen))
    for field in index_fields.ANALYZERS:
        name = field + suffix(gen)
        # Raw key names, as put.lua built them (terms are not percent-encoded).
        head = store.namespace_base(user_id) + name
        terms, docs = head + ":terms", head + ":docs"
        if client.exists(terms) or client.exists(docs):
            deleted += _delete_members(client, terms, lambda t, head=head: f"{head}:t:{t}")
            deleted += _delete_members(client, docs, lambda d, head=head: f"{head}:d:{d}")
        elif client.sismember(store.key(user_id, "fields"), name):
            # Written by a put.lua of format 6 or older (today's registers only ``v<sfx>``).
            deleted += _delete_unregistered(client, user_id, name)
        deleted += client.delete(terms, docs, head + ":stats", head + ":exp")
        client.srem(store.key(user_id, "fields"), name)
    return deleted


def _delete_unregistered(client, user_id: str, name: str) -> int:
    """A generation from before the registries: one SCAN of its own pattern."""
    log.info("index generation %s of %s has no key registry: scanning for its keys once",
             name, user_id)
    return _delete_keys(client, client.scan_iter(
        match=store.namespace_base(user_id) + name + ":*", count=2000))
