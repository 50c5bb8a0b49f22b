"""Writers of a memory's validity: superseded by a newer memory, ended with no replacement,
or made valid again. The older memory is never deleted or rewritten: each change is a new
version (kind ``supersede``, ``invalidate``, ``revalidate``) with actor and reason, an audit
event and a webhook event, and the row stays readable, linked both ways (``superseded_by``
on the older; the newer's ``supersedes`` is the rows naming it).

Validity is world time (``valid_from`` <= t < ``valid_until``), beside the versions'
transaction time: "as of June" reads it, whenever the memories were recorded.
"""

import datetime as dt

from django.db import transaction
from django.utils import timezone

from memories import tracing
from memories.errors import Conflict, InvalidInput, NotFound
from memories.history import actor_name
from memories.models import ChangeKind, ConflictStatus, Memory
from memories.models import Conflict as Proposal
from memories.services.audit import audit_record
from memories.services.versions import get_for_update, save_version
from memories.validation import MEMORY_ID_RE

# At most this many memories named in one write's ``supersedes``.
MAX_SUPERSEDES = 50
# A superseded_by chain longer than this is not followed further (a cycle check's bound).
MAX_CHAIN = 1000


def clean_supersedes(value) -> list[str]:
    """A write's ``supersedes``: distinct memory ids in the order given. Raises InvalidInput
    (not a list of ids, more than ``MAX_SUPERSEDES``) and NotFound (a malformed id: no such
    memory can exist)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput("supersedes must be a list of memory ids", field="supersedes")
    if len(value) > MAX_SUPERSEDES:
        raise InvalidInput(f"supersedes names at most {MAX_SUPERSEDES} memories",
                           field="supersedes")
    for memory_id in value:
        if not MEMORY_ID_RE.match(memory_id):
            raise NotFound(f"memory {memory_id!r} not found", field="supersedes")
    return list(dict.fromkeys(value))


def supersede(*, newer: Memory, older_ids: list[str], actor=None, reason: str = "") -> list[Memory]:
    """``newer`` supersedes each of ``older_ids`` (in the caller's transaction): each older
    memory gets ``valid_until`` = ``newer.valid_from`` and ``superseded_by`` = its id, as a
    new version. One already superseded by ``newer`` is left as it is.

    Only a memory of the same namespace and the same ``agent_id`` as ``newer`` can be
    superseded (an unscoped ``""`` memory and an agent's memory are different agents).

    Raises NotFound (an unknown id, or one of another namespace or another agent: the same
    answer, so neither learns another's ids), Conflict (``newer`` itself, or a memory that
    ``newer`` is already superseded by, directly or down a chain: a cycle) and InvalidInput
    (``newer`` holds from before the older memory did). Returns the changed memories."""
    ids = clean_supersedes(older_ids)
    if newer.memory_id in ids:
        raise Conflict("a memory cannot supersede itself", field="supersedes")
    olders = {m.memory_id: m for m in Memory.objects.select_for_update()
              .filter(memory_id__in=ids, user_id=newer.user_id, agent_id=newer.agent_id)}
    for memory_id in ids:
        if memory_id not in olders:
            raise NotFound(f"memory {memory_id} not found", field="supersedes")
    above = _chain_above(newer)
    for memory_id in ids:
        if memory_id in above:
            raise Conflict(f"{newer.memory_id} is already superseded by {memory_id}: "
                           "superseding it back would make a cycle", field="supersedes")
    changed = []
    for memory_id in ids:
        older = olders[memory_id]
        if older.superseded_by == newer.memory_id:
            continue
        if newer.valid_from < older.valid_from:
            raise InvalidInput(f"{newer.memory_id} holds from {newer.valid_from.isoformat()}, "
                               f"before {memory_id} does: it cannot end it", field="valid_from")
        older.valid_until, older.superseded_by = newer.valid_from, newer.memory_id
        changed.append(save_version(older, kind=ChangeKind.SUPERSEDE, actor=actor,
                                    reason=reason))
        audit_record(actor=actor, action="supersede", target=memory_id, reason=reason,
                     data={"user_id": newer.user_id, "superseded_by": newer.memory_id,
                           "valid_until": newer.valid_from.isoformat()})
    return changed


def _chain_above(memory: Memory) -> set[str]:
    """The ids down ``memory``'s ``superseded_by`` chain (what supersedes it, and so on)."""
    seen: set[str] = set()
    nxt = memory.superseded_by
    while nxt and nxt not in seen and len(seen) < MAX_CHAIN:
        seen.add(nxt)
        nxt = Memory.objects.filter(memory_id=nxt).values_list("superseded_by", flat=True).first()
    return seen


@tracing.write_span("update_memory")
@transaction.atomic
def memory_invalidate(*, memory_id: str, actor=None, reason: str,
                      valid_until: dt.datetime | None = None) -> Memory:
    """End a fact with no replacement ("no longer lives in Porto"): ``valid_until`` (default
    now), no ``superseded_by``. Raises InvalidInput (no reason; an end before the fact's
    ``valid_from``), NotFound, Conflict (forgotten; already ended: revalidate first)."""
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a reason is required to end a fact", field="reason")
    memory = get_for_update(memory_id)
    if memory.deleted_at is not None:
        raise Conflict(f"memory {memory_id} is forgotten; restore it first", field="memory_id")
    if memory.valid_until is not None:
        raise Conflict(f"memory {memory_id} ended already (valid until "
                       f"{memory.valid_until.isoformat()}); revalidate it first",
                       field="memory_id", valid_until=memory.valid_until.isoformat(),
                       superseded_by=memory.superseded_by)
    until = valid_until or timezone.now()
    if until < memory.valid_from:
        raise InvalidInput(f"valid_until must not be before valid_from "
                           f"({memory.valid_from.isoformat()})", field="valid_until")
    memory.valid_until, memory.superseded_by = until, None
    memory = save_version(memory, kind=ChangeKind.INVALIDATE, actor=actor, reason=reason)
    audit_record(actor=actor, action="invalidate", target=memory_id, reason=reason,
                 data={"user_id": memory.user_id, "valid_until": until.isoformat()})
    return memory


@tracing.write_span("update_memory")
@transaction.atomic
def memory_revalidate(*, memory_id: str, actor=None, reason: str) -> Memory:
    """Undo a supersession or an end: the fact holds again (``valid_until`` and
    ``superseded_by`` cleared), as a new version; an accepted proposal that ended it is
    recorded as rejected (both hold), so it is not proposed again. A memory that holds
    already is returned unchanged. Raises InvalidInput (no reason), NotFound."""
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a reason is required to revalidate a fact", field="reason")
    memory = get_for_update(memory_id)
    if memory.valid_until is None and memory.superseded_by is None:
        return memory
    was = {"valid_until": memory.valid_until.isoformat() if memory.valid_until else None,
           "superseded_by": memory.superseded_by}
    memory.valid_until, memory.superseded_by = None, None
    memory = save_version(memory, kind=ChangeKind.REVALIDATE, actor=actor, reason=reason)
    Proposal.objects.filter(older=memory, status=ConflictStatus.ACCEPTED).update(
        status=ConflictStatus.REJECTED, decided_at=timezone.now(),
        decided_by=actor_name(actor), decision_reason=f"revalidated: {reason}")
    audit_record(actor=actor, action="revalidate", target=memory_id, reason=reason,
                 data={"user_id": memory.user_id, **was})
    return memory

