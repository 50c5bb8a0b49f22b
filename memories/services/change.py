"""Writers that change a memory: edit, importance, forget, restore, rollback, bulk, purge.

Each change writes one history version, one audit event, and mirrors the row to Redis after
the commit.
"""

import datetime as dt
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from integrations.webhooks import outbox
from memories import tracing
from memories.errors import Conflict, InvalidInput, NotFound
from memories.history import MARKER_KINDS, actor_name
from memories.mirror import sync_memory
from memories.models import ChangeKind, Memory, MemoryType
from memories.services import conflicts, validity
from memories.services import context as context_service
from memories.services.audit import audit_record
from memories.services.create import (
    clean_content,
    clean_context,
    clean_metadata,
    clean_type,
    content_hash,
    memory_create,
)
from memories.services.purge import memories_erase
from memories.services.versions import get_for_update, save_version
from memories.text_fold import fold
from memories.validation import (
    clean_string_list,
    clean_unit_float,
)

log = logging.getLogger(__name__)


def _refuse_duplicate(memory: Memory) -> None:
    """The dedup rule for writes that change an existing memory (edit, rollback, restore):
    one live memory per content hash, user, agent (``agent_id``, ``""`` an agent of its
    own), conversation and type. A change that would make ``memory`` a second live copy of
    another memory of the same agent raises Conflict (409) naming it in ``duplicate_of``;
    the caller changes nothing. Another agent's copy is no duplicate (and never named).
    (Writes that create a memory return the live one instead: ``memory_create``.)"""
    # No ORDER BY in SQL, as in create's _live_duplicate: the dedup key's index finds the
    # few rows, ordered here.
    rows = (Memory.objects.filter(
        user_id=memory.user_id, agent_id=memory.agent_id,
        conversation_id=memory.conversation_id, type=memory.type,
        content_hash=memory.content_hash, deleted_at__isnull=True)
        .exclude(pk=memory.pk).order_by().values_list("created_at", "memory_id"))
    other = min(rows, default=(None, None))[1]
    if other is not None:
        raise Conflict(f"memory {other} already holds this text for the same user, "
                       "agent, conversation and type; forget it first", field="content",
                       duplicate_of=other)


@tracing.write_span("update_memory")
@transaction.atomic
def memory_update(
    *, memory_id: str, actor=None, reason: str = "", expected_version: int | None = None,
    content=None, importance=None, tags=None, type=None, metadata=None, context=None,
    valid_from=None, supersedes=None, supersession=None,
) -> Memory:
    """Write a new version with the given fields changed.

    ``expected_version`` (optimistic locking) raises Conflict (409, ``current_version`` in
    the body) when the memory has moved on, and for a forgotten memory (restore first). A call
    that changes nothing writes no version. The kind is ``importance`` when only importance
    changed, else ``edit``. ``valid_from`` (aware datetime) moves the start of the fact
    (InvalidInput when not before its ``valid_until``); ``supersedes`` and ``supersession``
    as ``memory_create`` takes them (the memory supersedes those named, with its
    ``valid_from``; a changed text is checked for proposals).
    """
    mode = conflicts.clean_mode(supersession)
    if supersedes is not None:
        supersedes = validity.clean_supersedes(supersedes)
    memory = get_for_update(memory_id)
    if memory.deleted_at is not None:
        raise Conflict(f"memory {memory_id} is forgotten; restore it first",
                       field="memory_id", current_version=memory.version)
    if expected_version is not None and expected_version != memory.version:
        raise Conflict(
            f"memory {memory_id} is at version {memory.version}, not {expected_version}",
            field="version", current_version=memory.version,
        )
    changed = set()
    if content is not None:
        content = clean_content(content)
        if content != memory.content:
            memory.content, memory.content_hash = content, content_hash(content)
            memory.content_folded = fold(content)
            changed.add("content")
    if importance is not None:
        importance = clean_unit_float(importance, "importance")
        if importance != memory.importance:
            memory.importance = importance
            changed.add("importance")
    if tags is not None:
        tags = clean_string_list(tags, "tags")
        if tags != memory.tags:
            memory.tags = tags
            changed.add("tags")
    if type is not None and clean_type(type) != memory.type:
        memory.type = type
        changed.add("type")
        if type != MemoryType.SHORT_TERM:
            memory.expire_at = None
        elif memory.expire_at is None:
            memory.expire_at = timezone.now() + dt.timedelta(
                seconds=settings.MEMORY_SHORT_TERM_TTL_SECONDS)
    if metadata is not None and clean_metadata(metadata) != memory.metadata:
        memory.metadata = metadata
        changed.add("metadata")
    if context is not None and clean_context(context) != memory.context:
        # The client's from now on: never rebuilt from the conversation again.
        memory.context = context
        memory.context_from = context_service.CLIENT if context else ""
        changed.add("context")
    if valid_from is not None and valid_from != memory.valid_from:
        if memory.valid_until is not None and valid_from >= memory.valid_until:
            raise InvalidInput(f"valid_from must be before valid_until "
                               f"({memory.valid_until.isoformat()})", field="valid_from")
        memory.valid_from = valid_from
        changed.add("valid_from")
    if changed & {"content", "type"}:
        _refuse_duplicate(memory)
    if changed:
        kind = ChangeKind.IMPORTANCE if changed == {"importance"} else ChangeKind.EDIT
        memory = save_version(memory, kind=kind, actor=actor, reason=reason)
    if supersedes:
        validity.supersede(newer=memory, older_ids=supersedes, actor=actor, reason=reason)
    if "content" in changed:
        conflicts.propose([memory], mode=mode, actor=actor, edited=True)
    return memory


@tracing.write_span("delete_memory")
@transaction.atomic
def memory_forget(*, memory_id: str, actor=None, reason: str = "",
                  kind: str = ChangeKind.FORGET) -> Memory:
    """Soft delete: the row and its history stay; it leaves search and the index.

    ``kind`` may say why (``archive`` by the policy, ``rollback`` of a consolidation).
    Forgetting a forgotten memory changes nothing. Raises NotFound.
    """
    memory = get_for_update(memory_id)
    if memory.deleted_at is not None:
        return memory
    memory.deleted_at = timezone.now()
    memory.deleted_by = actor_name(actor)
    return save_version(memory, kind=kind, actor=actor, reason=reason)


@tracing.write_span("update_memory")
@transaction.atomic
def memory_restore(*, memory_id: str, actor=None, reason: str = "") -> Memory:
    """Bring a forgotten memory back into search (a new version). Raises NotFound, and
    Conflict (``duplicate_of``) when another live memory holds its text meanwhile."""
    memory = get_for_update(memory_id)
    if memory.deleted_at is None:
        return memory
    memory.deleted_at = None
    memory.deleted_by = ""
    _refuse_duplicate(memory)
    return save_version(memory, kind=ChangeKind.RESTORE, actor=actor, reason=reason)


@tracing.write_span("update_memory")
@transaction.atomic
def memory_rollback(*, memory_id: str, version: int, actor=None, reason: str) -> Memory:
    """New version equal to ``version`` in content, importance, tags, type and context.

    A context the server built from the conversation is rebuilt from the conversation as it
    is now; any other context (the client's, a promoted message's) is the version's.

    Ids, namespace, access counters and other memories are never touched; history is never
    rewritten. A forgotten memory comes back if the target version was live. Raises
    InvalidInput (no reason / not an earlier version / a forget, purge or restore marker,
    ``history.MARKER_KINDS``), NotFound, Conflict (``duplicate_of``)
    when the version it brings back would copy another live memory.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a reason is required for a rollback", field="reason")
    memory = get_for_update(memory_id)
    if version == 0 and (memory.metadata or {}).get("consolidated_from"):
        # Version 0 of a consolidated memory is "before the consolidation".
        consolidation_undo(memory_id=memory_id, actor=actor, reason=reason)
        memory.refresh_from_db()
        return memory
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version < memory.version:
        raise InvalidInput(f"version must be an earlier version (1..{memory.version - 1})",
                           field="version")
    old = memory.history.filter(version=version).order_by("-history_id").first()
    if old is None:
        raise NotFound(f"version {version} of {memory_id} not found", field="version")
    if old.kind in MARKER_KINDS:
        raise InvalidInput(f"version {version} is a {old.kind} marker: it holds no content "
                           "to roll back to", field="version")
    memory.content, memory.content_hash = old.content, content_hash(old.content)
    memory.content_folded = fold(old.content)
    memory.importance, memory.tags, memory.type = old.importance, old.tags, old.type
    memory.expire_at = old.expire_at if old.type == MemoryType.SHORT_TERM else None
    memory.deleted_at = old.deleted_at
    memory.deleted_by = old.deleted_by
    memory.context, memory.context_from = old.context, old.context_from
    if memory.context_from == context_service.CONVERSATION:
        # A server-built context follows the conversation as it is now (derived, as the
        # postings are), not as it was when that version was written.
        memory.context = context_service.conversation_context(memory)
    if memory.deleted_at is None:
        _refuse_duplicate(memory)
    memory = save_version(memory, kind=ChangeKind.ROLLBACK, actor=actor, reason=reason)
    audit_record(actor=actor, action="rollback", target=memory_id, reason=reason,
                 data={"to_version": version, "new_version": memory.version})
    return memory


BULK_ACTIONS = ("importance", "forget", "restore")


@transaction.atomic
def memory_bulk(*, memory_ids: list[str], action: str, actor=None, importance=None,
                reason: str = "") -> list[Memory]:
    """Apply one action to several memories, all or nothing; each memory gets its own
    version (so a later rollback of one never touches the others). ``action`` is
    ``importance`` (with ``importance``), ``forget`` or ``restore``. Raises InvalidInput,
    NotFound."""
    if action not in BULK_ACTIONS:
        raise InvalidInput(f"action must be one of {', '.join(BULK_ACTIONS)}", field="action")
    if not memory_ids or len(memory_ids) > 500:
        raise InvalidInput("select 1 to 500 memories", field="memory_ids")
    out = []
    for memory_id in dict.fromkeys(memory_ids):
        if action == "importance":
            if importance is None:
                raise InvalidInput("importance is required", field="importance")
            out.append(memory_update(memory_id=memory_id, importance=importance, actor=actor,
                                     reason=reason))
        elif action == "forget":
            out.append(memory_forget(memory_id=memory_id, actor=actor, reason=reason))
        else:
            out.append(memory_restore(memory_id=memory_id, actor=actor, reason=reason))
    return out



@dataclass
class Purged:
    """What a purge did: ``index_pending`` is True when Redis still holds the memory."""

    memory_id: str
    user_id: str
    index_pending: bool = False


@tracing.write_span("delete_memory")
@transaction.atomic
def memory_purge(*, memory_id: str, actor=None, reason: str = "") -> Purged:
    """Hard delete (admin): the row and every version of its content are removed, and so are
    the copies of its text in other memories' contexts (the neighbouring turns of its
    conversation: ``memories.services.purge``); an audit event without content records who
    purged what and why. Returns a ``Purged`` whose ``index_pending`` says, once the
    transaction committed, that Redis could not drop it (reads drop it meanwhile; the
    reconcile removes it). Raises NotFound."""
    memory = get_for_update(memory_id)
    user_id = memory.user_id
    outcome = Purged(memory_id=memory_id, user_id=user_id)

    def mirror():
        outcome.index_pending = not sync_memory(memory_id, user_id=user_id)

    # Registered first, so it runs first after the commit: the memory leaves Redis before
    # the neighbours are mirrored and the serving index snapshots removed.
    transaction.on_commit(mirror)
    erased = memories_erase(memory_ids=[memory_id], user_ids=[user_id], actor=actor,
                            reason=reason)
    outbox.outbox_memory_purged(memory_id=memory_id, user_id=user_id,
                                conversation_id=memory.conversation_id, actor=actor,
                                reason=reason)
    audit_record(actor=actor, action="purge", target=memory_id, reason=reason,
                 data={"user_id": user_id, "versions": memory.version,
                       "redacted": sorted(erased.redacted)})
    return outcome



@transaction.atomic
def consolidation_undo(*, memory_id: str, actor=None, reason: str) -> list[str]:
    """Undo a consolidation in one audited action: forget the merged memory (kind
    ``rollback``), then bring back every source (``restore``), and record one audit event
    ``consolidation_undo``. The merged memory goes first: its text often equals a source's,
    and two live copies must never exist, even inside the transaction. A source purged
    since is skipped (and named in the event). Returns the restored ids. Raises InvalidInput
    (no reason, not a consolidated memory), Conflict (undone already), NotFound.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a reason is required to undo a consolidation", field="reason")
    merged = get_for_update(memory_id)
    sources = (merged.metadata or {}).get("consolidated_from")
    if not sources:
        raise InvalidInput("not a consolidated memory", field="memory_id")
    if merged.deleted_at is not None:
        raise Conflict(f"{memory_id} is forgotten: its consolidation was undone already",
                       field="memory_id")
    memory_forget(memory_id=memory_id, actor=actor, reason=reason, kind=ChangeKind.ROLLBACK)
    present = set(Memory.objects.filter(memory_id__in=sources).values_list("memory_id",
                                                                              flat=True))
    restored = [s for s in sources if s in present]
    for source in restored:
        memory_restore(memory_id=source, actor=actor, reason=reason)
    audit_record(actor=actor, action="consolidation_undo", target=memory_id, reason=reason,
                 data={"user_id": merged.user_id, "restored": restored,
                       "skipped": [s for s in sources if s not in present]})
    return restored


@transaction.atomic
def memory_promote(*, memory_id: str, actor=None, reason: str = "") -> tuple[Memory, bool]:
    """Turn a working or short-term memory into a user-wide long-term one.

    A new memory (kind ``promote``, ``metadata.promoted_from``) keeps the source's agent
    scope (``agent_id``, ``run_id``, as a promoted session message does) and is written
    through the same dedup as every write, within that agent: if the user already has that
    content as a long-term user-wide memory of the same agent, that one is returned with
    ``deduplicated`` True (another agent's copy is never answered). Returns
    ``(memory, deduplicated)``. Raises InvalidInput for a long-term memory, NotFound.
    """
    source = get_for_update(memory_id)
    if source.type == MemoryType.LONG_TERM and source.conversation_id is None:
        raise InvalidInput("memory is already a user-wide long-term memory", field="memory_id")
    return memory_create(
        actor=actor, kind=ChangeKind.PROMOTE, reason=reason, user_id=source.user_id,
        content=source.content, conversation_id=None, type=MemoryType.LONG_TERM,
        importance=source.importance, tags=source.tags, source=source.source,
        author=source.author, keywords=source.keywords, context=source.context,
        agent_id=source.agent_id, run_id=source.run_id,
        context_from=context_service.COPY if source.context else "",
        metadata={**source.metadata, "promoted_from": memory_id})
