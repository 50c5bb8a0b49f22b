"""Whether a namespace's index statistics agree with its documents.

Each field of the live generation keeps ``N`` (live documents) and ``total_len`` (the sum
of their lengths) in ``<field>:stats``; every recall's IDF and average length come from
them. ``put.lua`` keeps them exact write by write, so a difference means a fault (a write
that landed while keys were being deleted under it, a hand edit): reconcile reports it as
drift and rebuilds the namespace (``operations.drift``).

The check reads every memory's record lengths (pipelined, in batches), so it runs
in reconcile and in the cached health figure, never on a recall. It is not atomic: a write
between its reads could make a sound index look off, so the reads are repeated while the
namespace's write stream counted a new entry meanwhile, and a namespace that never held
still that long is reported as unchecked, not as drifted.
"""

from dataclasses import dataclass

from redis import exceptions as redis_exceptions
from redis.client import NEVER_DECODE

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


def _counts(client, user_id: str) -> list[FieldCount]:
    """Every field's statistics beside what its documents add up to: each memory of ``ids``
    read through its record's lengths (or, in a format-6 index, each field's vector's
    ``#dl``), ``BATCH`` per pipeline."""
    gen = store.text(client.get(store.key(user_id, "gen"))) or "0"
    sfx = "" if gen == "0" else f"@{gen}"
    base = store.namespace_base(user_id)
    stamp = (store.text(client.get(base + "format")) or "1").removeprefix("new:")
    fields = list(index_fields.ANALYZERS)
    legacy_fields = fields if stamp.isdigit() and int(stamp) < 7 else []
    docs = dict.fromkeys(fields, 0)
    docs_len = dict.fromkeys(fields, 0)
    batch: list[str] = []

    def flush():
        pipe = client.pipeline(transaction=False)
        for memory_id in batch:
            # The record's first line, "<n> <x>" (search.index.fields.record_text), as bytes:
            # a range may end inside a character of the line after it.
            pipe.execute_command("GETRANGE", f"{base}v{sfx}:d:{memory_id}", 0, 40,
                                 **{NEVER_DECODE: True})
            for field in legacy_fields:
                pipe.hget(f"{base}{field}{sfx}:d:{memory_id}", "#dl")
        replies = iter(pipe.execute())
        for _ in batch:
            head = next(replies)
            legacy = [next(replies) for _ in legacy_fields]
            if head:
                n, x = head.partition(b"\n")[0].split(b" ")
                lengths = index_fields.field_lengths(int(n), int(x))
            else:
                lengths = {f: int(dl or 0) for f, dl in zip(legacy_fields, legacy, strict=True)}
            for field, dl in lengths.items():
                if dl:
                    docs[field] += 1
                    docs_len[field] += dl
        batch.clear()

    for member in client.sscan_iter(store.key(user_id, "ids"), count=BATCH):
        batch.append(store.text(member))
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    out = []
    for field in fields:
        stats = postings.field_stats(client, user_id=user_id, field=field)
        out.append(FieldCount(field=field, N=stats["N"], total_len=stats["total_len"],
                              docs=docs[field], docs_len=docs_len[field]))
    return out


def statistics_check(client, user_id: str) -> list[FieldCount] | None:
    """The fields of ``user_id``'s live generation whose statistics differ from their
    documents (``[]``: all agree), or None when writes kept landing during every one of
    ``ATTEMPTS`` reads (unchecked). Raises RedisError."""
    for _ in range(ATTEMPTS):
        before = _entries_added(client, user_id)
        counts = _counts(client, user_id)
        if _entries_added(client, user_id) == before:
            return [c for c in counts if not c.agrees]
    return None
