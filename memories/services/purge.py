"""Erasing memories for good, with every copy of their text the server made.

The server copies a memory's text into other memories' contexts: the neighbouring turns of
its conversation hold it in their server-built context (``context_from`` "conversation",
``memories.services.context``), a promoted or consolidated memory copies such a context
("copy"), and each version in their history keeps the context it had then. Erasing a memory
removes those copies in the same transaction: a live turn of the conversation gets the
context its conversation gives it without the erased memory (as if it had never been
there); every other copy (a forgotten turn, a copied context, a historical version) loses
the lines that are lines of the erased text. The versions themselves stay: this is the one
rewrite of history there is, and an audit event ``redact`` per memory names the versions it
redacted. A context the client wrote is the client's text, and a session-built one is the
session's messages (which erasing a memory does not touch): both are left as they are.
"""

import logging
from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.db import transaction
from django.db.models import Q
from django.dispatch import Signal

from integrations.webhooks import outbox
from memories import store
from memories.mirror import sync_instances
from memories.models import Memory
from memories.services import context as context_service
from memories.services.audit import audit_record
from search.serving import snapshot

log = logging.getLogger(__name__)

# The contexts the server wrote from other memories' text.
SERVER_COPIES = (context_service.CONVERSATION, context_service.COPY)
CHUNK = 500  # ids per statement (SQLite's bound on a statement's parameters)
# A line is looked for by its first characters (SQLite refuses long LIKE patterns); each
# candidate is then checked line by line.
LOOKUP_CHARS = 200


# Sent inside the erasing transaction, before the rows go, with ``memory_ids`` (a chunk):
# what an app above the memory core keeps of these memories beyond its foreign keys, it
# scrubs (the recall log: the questions that recalled them, recalls.erasure).
memories_erasing = Signal()


@dataclass
class Erased:
    """What :func:`memories_erase` did: ``rebuilt`` the live memories whose context changed
    (mirrored after the commit), ``redacted`` memory id -> the versions whose context it
    redacted."""

    memory_ids: list[str]
    rebuilt: list[Memory] = field(default_factory=list)
    redacted: dict[str, list[int]] = field(default_factory=dict)


def memories_erase(*, memory_ids: list[str], user_ids: list[str], actor=None,
                   reason: str = "") -> Erased:
    """Delete the memories ``memory_ids`` (of the namespaces ``user_ids``) with every
    version of them, scrub their content from the webhook outbox, and remove the copies of
    their text from the other memories of those namespaces (see the module docstring). After
    the commit, the memories whose context changed are mirrored and the namespaces' serving
    index snapshots in Redis are deleted (they hold the erased terms); removing
    the erased memories themselves from Redis is the caller's (one memory: ``sync_memory``;
    a namespace replaced: its reindex). Call inside the erasing transaction, after locking
    the rows. Every purge goes through here."""
    erased = Erased(memory_ids=list(memory_ids))
    # Copies live in the namespaces' other memories: none when whole namespaces go.
    others = Memory.objects.filter(user_id__in=user_ids).count() > len(erased.memory_ids)
    lines = _lines_of(erased.memory_ids) if others else set()
    outbox.outbox_purge_memories(memory_ids=erased.memory_ids)
    for start in range(0, len(erased.memory_ids), CHUNK):
        chunk = erased.memory_ids[start:start + CHUNK]
        memories_erasing.send(sender=Memory, memory_ids=chunk)
        Memory.history.filter(memory_id__in=chunk).delete()
        Memory.objects.filter(memory_id__in=chunk).delete()
        # After the delete: simple_history adds a "-" row holding the content, which goes too.
        Memory.history.filter(memory_id__in=chunk).delete()
    if lines:
        _redact_copies(erased, lines, user_ids, actor=actor, reason=reason)
    rebuilt, namespaces = erased.rebuilt, sorted(set(user_ids))

    def after_commit():
        sync_instances(rebuilt)
        for user_id in namespaces:
            snapshot.discard(user_id)
        try:
            client = store.get_client()
            for user_id in namespaces:
                snapshot.purged(client, user_id)
        except store.RedisError as exc:
            # The purge stands; other hosts' snapshots go when their index next builds.
            log.warning("purge of %s not counted in Redis: %s", namespaces,
                        type(exc).__name__)

    transaction.on_commit(after_commit)
    return erased


def _lines_of(memory_ids: list[str]) -> set[str]:
    """The non-blank lines (stripped) of every version of these memories' content."""
    lines: set[str] = set()
    for start in range(0, len(memory_ids), CHUNK):
        chunk = memory_ids[start:start + CHUNK]
        for text in (*Memory.history.filter(memory_id__in=chunk)
                     .values_list("content", flat=True).distinct(),
                     *Memory.objects.filter(memory_id__in=chunk)
                     .values_list("content", flat=True)):
            lines.update(line.strip() for line in text.splitlines() if line.strip())
    return lines


def without_lines(text: str, lines: set[str]) -> str:
    """``text`` without its lines that are (stripped) one of ``lines``; ``text`` itself
    when it has none."""
    kept = [line for line in text.splitlines() if line.strip() not in lines]
    return text if len(kept) == len(text.splitlines()) else "\n".join(kept)


def _holding(queryset, lines: set[str]) -> list:
    """The rows of ``queryset`` whose context may hold one of ``lines`` (one OR of LIKEs
    per 100 lines); the caller checks each line by line."""
    ordered, found = sorted(lines), {}
    for start in range(0, len(ordered), 100):
        looks = [Q(context__contains=line[:LOOKUP_CHARS]) for line in ordered[start:start + 100]]
        for row in queryset.filter(reduce(or_, looks)):
            found.setdefault(row.pk, row)
    return list(found.values())


def _redact_copies(erased: Erased, lines: set[str], user_ids: list[str], *, actor,
                   reason: str) -> None:
    rows = (Memory.objects.select_for_update()
            .filter(user_id__in=user_ids, context_from__in=SERVER_COPIES)
            .order_by("memory_id"))
    for memory in _holding(rows, lines):
        live = memory.deleted_at is None
        if live and memory.context_from == context_service.CONVERSATION and memory.conversation_id:
            text = context_service.conversation_context(memory)
        else:
            text = without_lines(memory.context, lines)
        if context_service.context_rebuilt(memory, text, sync=False) and live:
            erased.rebuilt.append(memory)
    versions = (Memory.history.filter(user_id__in=user_ids, context_from__in=SERVER_COPIES)
                .order_by("memory_id", "history_id"))
    owners = {}
    for version in _holding(versions, lines):
        text = without_lines(version.context, lines)
        if text != version.context:
            Memory.history.filter(history_id=version.history_id).update(context=text)
            erased.redacted.setdefault(version.memory_id, []).append(version.version)
            owners[version.memory_id] = version.user_id
    for memory_id, versions_of in sorted(erased.redacted.items()):
        audit_record(actor=actor, action="redact", target=memory_id, reason=reason,
                     data={"user_id": owners[memory_id], "purged": erased.memory_ids,
                           "versions": sorted(set(versions_of))})
