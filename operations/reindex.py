"""Rebuild a namespace's index from the database beside the live one, then swap.

The new generation is filled while the live one keeps answering recalls; writes that arrive
meanwhile go to both (put.lua), and the builder never overwrites a newer version with its
snapshot. The swap is one script (``gen`` := new, the claim dropped, only by its owner), so
a recall sees either the complete old index or the complete new one. The new generation's
reference average length is the real one, which keeps the early-termination bound tight.
The old generation's keys are deleted after the swap. Also restores the hot-store hashes, so
after a Redis flush a reindex brings every memory back.

The builder's claim on the namespace lives by a heartbeat (``operations.reindex_claim``):
a builder killed mid-way blocks nothing for longer than ``MEMORY_REINDEX_CLAIM_SECONDS``,
and the next reindex deletes what it left half-built. Generations are deleted through their
own key registries (``search.index.generations``): a namespace's reindex touches that
namespace's keys only, never a SCAN of the keyspace.
"""

import logging
from collections.abc import Callable

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from memories import store
from memories.mirror import mirror_args_or_flag
from memories.models import Memory
from memories.services import marks
from operations import reindex_claim
from search.index import postings
from search.index.generations import generation_delete

log = logging.getLogger(__name__)


def _drop_generation(client, user_id: str, gen: int) -> int:
    removed = generation_delete(client, user_id, gen)
    reindex_claim.generation_forget(client, user_id, gen)
    return removed


def reindex_namespace(user_id: str, *, progress: Callable[[int, int], None] | None = None,
                      forget_versions: bool = False) -> dict:
    """Rebuild namespace ``user_id`` from the database; returns counts and the generation.

    ``progress(done, total)`` is called after each batch (of ``MEMORY_REINDEX_BATCH``).
    Hot-store hashes of memories the database no longer holds live are removed.
    ``forget_versions`` drops the record of versions already mirrored (after a restore
    replaced the namespace with older versions). Raises Conflict while another reindex of
    this namespace is alive (its heartbeat fresh) or when this one's claim was taken over,
    ``redis.RedisError`` when Redis fails (the live index is untouched then: the half-built
    generation is dropped).
    """
    client = store.get_client()
    claim = reindex_claim.claim_take(client, user_id)
    new = claim.generation
    live = int(store.text(client.get(store.key(user_id, "gen"))) or 0)
    try:
        # Generations a dead builder left half-built (and any older leftovers) go first.
        for gen in sorted(reindex_claim.generations_held(client, user_id) - {live, new}):
            log.info("reindex of %s: deleting generation %s left half-built", user_id, gen)
            _drop_generation(client, user_id, gen)
        # Nothing is deleted of ``new`` itself: the claim numbered it above every generation
        # that may hold keys, and writes landing from now on already put into it (deleting
        # under them left documents that N no longer counted).
        if forget_versions:
            client.delete(store.key(user_id, "ver"))
        now = timezone.now()
        rows = Memory.objects.filter(user_id=user_id, deleted_at__isnull=True).filter(
            Q(expire_at__isnull=True) | Q(expire_at__gt=now)).order_by("memory_id")
        total = rows.count()
        done, last, skipped, recovered = 0, "", [], []
        while True:
            claim.beat(client)
            # Keyset pagination: rows created or forgotten meanwhile would shift offsets and
            # make the builder skip a row (writes during the build reach it by dual write).
            chunk = list(rows.filter(memory_id__gt=last)[:settings.MEMORY_REINDEX_BATCH])
            if not chunk:
                break
            last = chunk[-1].memory_id
            puts = []
            for memory in chunk:
                # A row Redis cannot take is flagged, logged and left out; the build goes on.
                had_error = bool(memory.index_error)
                args, ok = mirror_args_or_flag(memory, now)
                if not ok:
                    skipped.append(memory.memory_id)
                    continue
                if had_error:
                    recovered.append(memory.memory_id)
                puts.append(args)

            def build(puts=puts):
                pipe = store.NamespacePipelines(client).for_namespace(user_id)
                postings.queue_puts(pipe, puts, mode="build")
                pipe.execute()

            postings.run_with_scripts(client, build)
            done += len(chunk)
            if progress:
                progress(min(done, total), total)
        claim.swap(client, index_format=postings.INDEX_FORMAT)
    except reindex_claim.Conflict:
        raise  # taken over: the new owner's generation is not ours to delete
    except Exception:
        claim.release(client)
        _drop_generation(client, user_id, new)
        raise
    if recovered:
        marks.memories_clear_index_error(memory_ids=recovered)
    removed = _drop_generation(client, user_id, live)
    removed += _delete_orphan_hashes(client, user_id)
    client.sadd(store.global_key("namespaces"), user_id)
    return {"user_id": user_id, "indexed": total - len(skipped), "skipped": len(skipped),
            "generation": new, "old_keys_removed": removed}


def _delete_orphan_hashes(client, user_id: str) -> int:
    """Remove from Redis the memories it holds that are not live in the database: each by a
    removal put at the version Redis holds (its hash, record, statistics share and ``ids``
    entry go together, and the write stream tells every serving index)."""
    ids_key = store.key(user_id, "ids")
    held = {store.text(i) for i in client.smembers(ids_key)}
    live = set(Memory.objects.filter(user_id=user_id, memory_id__in=held,
                                     deleted_at__isnull=True).values_list("memory_id", flat=True))
    orphans = sorted(held - live)
    if orphans:
        versions = client.hmget(store.key(user_id, "ver"), orphans)
        puts = [{"user_id": user_id, "memory_id": memory_id, "version": int(version or 0),
                 "hash_fields": {}, "record": postings.Record()}
                for memory_id, version in zip(orphans, versions, strict=True)]

        def remove():
            pipes = store.NamespacePipelines(client)  # a cluster's pipeline refuses EVALSHA
            postings.queue_puts(pipes.for_namespace(user_id), puts,
                                stream_maxlen=settings.MEMORY_STREAM_MAXLEN)
            pipes.execute()

        postings.run_with_scripts(client, remove)
    return len(orphans)


def reindex_all(*, progress: Callable[[str, int, int], None] | None = None) -> list[dict]:
    """Reindex every namespace that has memories in the database, and warm the hot window of
    every session still within its TTL: after a Redis flush this restores everything."""
    out = []
    namespaces = list(
        Memory.objects.order_by("user_id").values_list("user_id", flat=True).distinct())
    # Progress counts the rows of ALL the job's namespaces (the live, unexpired ones each
    # reindex_namespace indexes), so it rises once from 0 to the total instead of restarting
    # with every namespace.
    now = timezone.now()
    sizes = dict(Memory.objects.filter(deleted_at__isnull=True).filter(
        Q(expire_at__isnull=True) | Q(expire_at__gt=now)).values("user_id")
        .annotate(n=Count("memory_id")).values_list("user_id", "n"))
    grand_total, before = sum(sizes.values()), 0
    for user_id in namespaces:
        def report(done, _total, user_id=user_id, before=before):
            if progress:
                progress(user_id, min(before + done, grand_total), grand_total)
        result = reindex_namespace(user_id, progress=report)
        before += sizes.get(user_id, 0)
        out.append(result)
    from sessions.store import warm_live_sessions

    warm_live_sessions()
    return out
