"""Whether a namespace's index statistics agree with its document vectors.

Each field of the live generation keeps ``N`` (live documents) and ``total_len`` (the sum
of their lengths) in ``<field>:stats``; every recall's IDF and average length come from
them. ``put.lua`` keeps them exact write by write, so a difference means a fault (a write
that landed while keys were being deleted under it, a hand edit): reconcile reports it as
drift and rebuilds the namespace (``operations.drift``).

The check reads every document's length (one pipelined HGET each, in batches), so it runs
in reconcile and in the cached health figure, never on a recall. It is not atomic: a write
between its reads could make a sound index look off, so the reads are repeated while the
namespace's write stream counted a new entry meanwhile, and a namespace that never held
still that long is reported as unchecked, not as drifted.
"""

from dataclasses import dataclass

from redis import exceptions as redis_exceptions

from memories import store
from search.index import fields as index_fields
from search.index import postings

BATCH = 1000
ATTEMPTS = 3


@dataclass(frozen=True)
class FieldCount:
    """One field of the live generation: what its statistics say (``N``, ``total_len``) and
    what its documents add up to (``docs``, ``docs_len``)."""

    field: str
    N: int
    total_len: int
    docs: int
    docs_len: int

    @property
    def agrees(self) -> bool:
        return self.docs == self.N and self.total_len == self.docs_len


def _entries_added(client, user_id: str) -> int:
    try:
        return int(client.xinfo_stream(store.key(user_id, "stream"))["entries-added"])
    except redis_exceptions.ResponseError:  # no stream yet: nothing was ever written
        return 0


def _count(client, user_id: str, field: str) -> FieldCount:
    name = postings.live_field(client, user_id, field)
    stats = postings.field_stats(client, user_id=user_id, field=field)
    head = store.namespace_base(user_id) + name
    docs = docs_len = 0
    batch: list[str] = []

    def flush():
        nonlocal docs, docs_len
        pipe = client.pipeline(transaction=False)
        for memory_id in batch:
            pipe.hget(f"{head}:d:{memory_id}", "#dl")
        for dl in pipe.execute():
            if dl is not None:
                docs += 1
                docs_len += int(dl)
        batch.clear()

    for member in client.sscan_iter(head + ":docs", count=BATCH):
        batch.append(store.text(member))
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    return FieldCount(field=field, N=stats["N"], total_len=stats["total_len"], docs=docs,
                      docs_len=docs_len)


def statistics_check(client, user_id: str) -> list[FieldCount] | None:
    """The fields of ``user_id``'s live generation whose statistics differ from their
    documents (``[]``: all agree), or None when writes kept landing during every one of
    ``ATTEMPTS`` reads (unchecked). Raises RedisError."""
    for _ in range(ATTEMPTS):
        before = _entries_added(client, user_id)
        counts = [_count(client, user_id, field) for field in index_fields.ANALYZERS]
        if _entries_added(client, user_id) == before:
            return [c for c in counts if not c.agrees]
    return None
