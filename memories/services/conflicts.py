"""The review queue's writer: supersessions proposed on every write, accepted or rejected.

On each write of a memory's text (create, import, promote, edit), in the write's own
transaction, the text's slots (``memories.supersession.claims``: a subject and attribute,
or a statement frame) are recorded, and the current memories of the namespace and of the
same ``agent_id`` (an agent never supersedes another's facts; ``""`` is an agent of its
own) holding one of them are handed to the detector (``memories.supersession.detector``),
which proposes the most recent holder of each slot whose value differs. A proposal is a
``Conflict`` row, listed as soon as the write answers. ``MEMORY_SUPERSESSION`` (or a write's
``supersession``) says what happens: ``off`` proposes nothing, ``propose`` lists them,
``apply`` also accepts those at or above ``MEMORY_SUPERSESSION_APPLY_AT`` (still listed).

Accepting a proposal supersedes ``older`` by ``newer`` (``memories.services.validity``);
rejecting records that both hold, and the pair (one row) is never proposed again.
"""

import datetime as dt

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memories.errors import Conflict as ConflictError
from memories.errors import InvalidInput, NotFound
from memories.history import actor_name
from memories.models import Conflict, ConflictStatus, Memory, MemorySlot
from memories.services import validity
from memories.services.audit import audit_record
from memories.supersession.claims import slot_keys
from memories.supersession.detector import propose as detect

MODES = ("off", "propose", "apply")
# The current holders of a write's slots read per write, most recent first: enough for the
# detector, which weighs only the most recent holder of each slot.
CANDIDATES = 50


def clean_mode(value) -> str:
    """A write's ``supersession`` (None: the ``MEMORY_SUPERSESSION`` setting). Raises
    InvalidInput naming ``supersession``."""
    if value is None:
        return settings.MEMORY_SUPERSESSION
    if value not in MODES:
        raise InvalidInput(f"supersession must be one of {', '.join(MODES)}",
                           field="supersession")
    return value


def propose(memories: list[Memory], *, mode: str, actor=None,
            edited: bool = False) -> list[Conflict]:
    """Record the slots of ``memories`` (just written, in this transaction, in the order
    written) and propose what they supersede. ``edited``: their text changed, so their
    earlier slots go first. Returns the proposals made (applied ones accepted)."""
    if edited:
        MemorySlot.objects.filter(memory__in=memories).delete()
    slots = {m.memory_id: slot_keys(m.content) for m in memories}
    MemorySlot.objects.bulk_create(
        [MemorySlot(memory=m, user_id=m.user_id, slot=s[:200])
         for m in memories for s in slots[m.memory_id]], batch_size=500)
    if mode == "off":
        return []
    made = []
    by_scope: dict[tuple[str, str], list[Memory]] = {}
    for m in memories:
        if slots[m.memory_id] and m.deleted_at is None:
            by_scope.setdefault((m.user_id, m.agent_id or ""), []).append(m)
    for (user_id, agent_id), group in by_scope.items():
        made += _propose_in(user_id, agent_id, group, slots, mode=mode, actor=actor,
                            edited=edited)
    return made


def _propose_in(user_id: str, agent_id: str, group: list[Memory], slots: dict, *,
                mode: str, actor, edited: bool) -> list[Conflict]:
    """Proposals for the memories of ``group``, all of namespace ``user_id`` and agent
    ``agent_id``: only holders of that same agent are weighed."""
    wanted = sorted({s for m in group for s in slots[m.memory_id]})
    ids = {m.memory_id for m in group}
    # (created_at, id, text, slots) of every holder, the batch's own memories included: an
    # import's later line may supersede an earlier one.
    holders: dict[str, list] = {}
    for memory_id, slot, content, created in _holders(user_id, agent_id, wanted,
                                                      CANDIDATES * len(group)):
        if memory_id not in ids:
            holders.setdefault(memory_id, [created, memory_id, content, set()])[3].add(slot)
    for m in group:
        holders[m.memory_id] = [m.created_at, m.memory_id, m.content, set(slots[m.memory_id])]
    ranked = sorted(holders.values(), key=lambda h: (h[0], h[1]), reverse=True)
    made = []
    for m in group:
        mine = set(slots[m.memory_id])
        # A promoted memory is a copy of its source: the source is no older fact of it.
        source = (m.metadata or {}).get("promoted_from")
        skip = {m.memory_id, source if isinstance(source, str) else None}
        held = [(h[1], h[2]) for h in ranked
                if h[1] not in skip and (h[0], h[1]) < (m.created_at, m.memory_id)
                and h[3] & mine][:CANDIDATES]
        if not held:
            continue
        found = detect(m.content, held)
        if found:
            made += _record(m, found, mode=mode, actor=actor, edited=edited)
    return made


def _holders(user_id: str, agent_id: str, slots: list[str], limit: int) -> list[tuple]:
    """``(memory_id, slot, content, created_at)`` of the current memories (not forgotten,
    not ended) of ``user_id`` and of agent ``agent_id`` (``""``: unscoped ones) holding
    one of ``slots``, newest first, at most ``limit``
    rows: one query on the slots' index, in plain SQL (on every write, the ORM's query
    building cost more than the query)."""
    qn = connection.ops.quote_name
    slot_t, memory_t = qn(MemorySlot._meta.db_table), qn(Memory._meta.db_table)
    marks = ", ".join(["%s"] * len(slots))
    sql = (f"SELECT s.{qn('memory_id')}, s.{qn('slot')}, m.{qn('content')}, "
           f"m.{qn('created_at')} FROM {slot_t} s JOIN {memory_t} m "
           f"ON m.{qn('memory_id')} = s.{qn('memory_id')} "
           f"WHERE s.{qn('user_id')} = %s AND s.{qn('slot')} IN ({marks}) "
           f"AND m.{qn('agent_id')} = %s "
           f"AND m.{qn('deleted_at')} IS NULL AND m.{qn('valid_until')} IS NULL "
           f"ORDER BY m.{qn('created_at')} DESC, s.{qn('memory_id')} DESC LIMIT %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, *slots, agent_id, limit])
        rows = cursor.fetchall()
    return [(m, slot, content, _aware(created)) for m, slot, content, created in rows]


def _aware(value) -> dt.datetime:
    """A datetime column as the ORM gives it (SQLite hands plain SQL a string)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, dt.UTC)
    return value


def _record(newer: Memory, found, *, mode: str, actor, edited: bool) -> list[Conflict]:
    """Write the detector's proposals for ``newer``: pairs decided or proposed before are
    skipped (one row per pair, whatever its status; a memory just created has none)."""
    known = set(Conflict.objects.filter(newer=newer, older_id__in=[p.older for p in found])
                .values_list("older_id", flat=True)) if edited else set()
    now = timezone.now()
    out = []
    for p in found:
        if p.older in known:
            continue
        conflict = Conflict.objects.create(
            user_id=newer.user_id, newer=newer, older_id=p.older,
            confidence=min(1.0, max(0.0, float(p.confidence))), reason=p.reason[:500],
            evidence=p.evidence, created_at=now)
        if mode == "apply" and conflict.confidence >= settings.MEMORY_SUPERSESSION_APPLY_AT:
            try:
                with transaction.atomic():
                    _accept(conflict, actor=actor, reason="applied on write: " + p.reason)
            except (ConflictError, InvalidInput, NotFound):
                pass  # a cycle or an older start: left open for a reviewer
        out.append(conflict)
    return out


def conflicts_restore(rows: list[dict]) -> int:
    """Write an export's proposals back (a replace import, in its transaction): ``rows`` as
    ``operations.import_document.document_conflicts`` gives them. A row whose memories are
    not both present, or whose pair is held already, is skipped. Returns how many."""
    ids = {r[k] for r in rows for k in ("newer", "older")}
    present = dict(Memory.objects.filter(memory_id__in=ids).values_list("memory_id", "user_id"))
    held = set(Conflict.objects.filter(newer_id__in=ids).values_list("newer_id", "older_id"))
    made = []
    for r in rows:
        pair = (r["newer"], r["older"])
        if pair in held or r["newer"] not in present or r["older"] not in present \
                or present[r["newer"]] != present[r["older"]] or r["newer"] == r["older"]:
            continue
        held.add(pair)
        made.append(Conflict(
            user_id=present[r["newer"]], newer_id=r["newer"], older_id=r["older"],
            confidence=r["confidence"], reason=str(r.get("reason") or "")[:500],
            evidence=r.get("evidence") if isinstance(r.get("evidence"), dict) else {},
            status=r.get("status") or ConflictStatus.OPEN,
            created_at=r.get("created_at") or timezone.now(), decided_at=r.get("decided_at"),
            decided_by=str(r.get("decided_by") or "")[:150],
            decision_reason=str(r.get("decision_reason") or "")))
    Conflict.objects.bulk_create(made, batch_size=500)
    return len(made)


def _locked(conflict_id) -> Conflict:
    if isinstance(conflict_id, bool) or not isinstance(conflict_id, int):
        raise NotFound(f"conflict {conflict_id!r} not found", field="conflict_id")
    try:
        return (Conflict.objects.select_for_update().select_related("newer", "older")
                .get(pk=conflict_id))
    except Conflict.DoesNotExist:
        raise NotFound(f"conflict {conflict_id} not found", field="conflict_id") from None


def _accept(conflict: Conflict, *, actor, reason: str) -> None:
    newer = Memory.objects.select_for_update().get(pk=conflict.newer_id)
    validity.supersede(newer=newer, older_ids=[conflict.older_id], actor=actor,
                       reason=reason)
    _decide(conflict, ConflictStatus.ACCEPTED, actor=actor, reason=reason)


def _decide(conflict: Conflict, status: str, *, actor, reason: str) -> None:
    conflict.status, conflict.decided_at = status, timezone.now()
    conflict.decided_by, conflict.decision_reason = actor_name(actor), reason or ""
    conflict.save(update_fields=["status", "decided_at", "decided_by", "decision_reason"])
    audit_record(actor=actor, action=f"conflict_{status}", target=str(conflict.pk),
                 reason=reason, data={"user_id": conflict.user_id, "newer": conflict.newer_id,
                                      "older": conflict.older_id})


@transaction.atomic
def conflict_accept(*, conflict_id: int, actor=None, reason: str = "") -> Conflict:
    """Supersede the proposal's ``older`` by its ``newer``. Accepting an accepted proposal
    changes nothing. Raises NotFound, Conflict (a cycle), InvalidInput (newer holds from
    before older)."""
    conflict = _locked(conflict_id)
    if conflict.status != ConflictStatus.ACCEPTED:
        _accept(conflict, actor=actor, reason=reason)
    return conflict


@transaction.atomic
def conflict_reject(*, conflict_id: int, actor=None, reason: str = "") -> Conflict:
    """Record that both memories hold; the pair is not proposed again. Rejecting an
    accepted proposal undoes it: ``older`` holds again (``validity.memory_revalidate``).
    Raises NotFound."""
    conflict = _locked(conflict_id)
    if conflict.status == ConflictStatus.REJECTED:
        return conflict
    if conflict.status == ConflictStatus.ACCEPTED:
        validity.memory_revalidate(memory_id=conflict.older_id, actor=actor,
                                   reason=reason or f"conflict {conflict.pk} rejected")
    _decide(conflict, ConflictStatus.REJECTED, actor=actor, reason=reason)
    return conflict


def conflicts_decide(*, conflict_ids: list[int], accept: bool, actor=None,
                     reason: str = "") -> tuple[list[Conflict], dict[int, str]]:
    """Accept (or reject) several proposals, each in its own transaction: one that cannot
    be accepted (a cycle, gone) is reported in the second value (``{id: message}``) and the
    others still are. Returns ``(done, failed)``."""
    done, failed = [], {}
    decide = conflict_accept if accept else conflict_reject
    for conflict_id in dict.fromkeys(conflict_ids):
        try:
            done.append(decide(conflict_id=conflict_id, actor=actor, reason=reason))
        except (ConflictError, InvalidInput, NotFound) as exc:
            failed[conflict_id] = exc.message
    return done, failed
