"""Deleting one index generation of a namespace without scanning the keyspace.

``put.lua`` records, per index field of a generation (``c``, ``c@3``, ...), the terms it
holds postings for (``<field>:terms``) and the memories it holds a document vector for
(``<field>:docs``). Those two sets name every key of the generation, so deleting it costs
the generation's own keys: nothing of another namespace, and no SCAN (which walks every key
of the server, 6 walks per namespace reindex before). A generation written before these
registries existed has none; it is found by one SCAN of its own pattern, once.
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
    deleted = 0
    for field in index_fields.ANALYZERS:
        name = field + suffix(gen)
        # Raw key names, as put.lua and search.lua build them (terms are not percent-encoded).
        head = store.namespace_base(user_id) + name
        terms, docs = head + ":terms", head + ":docs"
        if client.exists(terms) or client.exists(docs):
            deleted += _delete_members(client, terms, lambda t, head=head: f"{head}:t:{t}")
            deleted += _delete_members(client, docs, lambda d, head=head: f"{head}:d:{d}")
        elif client.exists(head + ":stats"):
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
