"""Propose supersessions: a newer memory whose claim gives a slot a different value than the
most recent held memory holding that slot.

Shapes: `propose(newer_text, held) -> list[Proposal]` with `held` = [(memory_id, text)], most
recent first; `pairs_for(memories) -> [(newer_id, older_id)]` over [(id, text)] in time order
(the evaluation loop shared by the dev-set test and the bench).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from memories.supersession import values
from memories.supersession.claims import Claim, read, slot_keys
from memories.supersession.fact import same_thing

# Confidence: a matched attribute rule is good evidence; change words in the newer text make it
# strong; a frame match (same sentence, other number) is weaker without change words.
_BASE_ATTRIBUTE = 0.7
_BASE_FRAME = 0.55
_CHANGE_BONUS = 0.2
_MAX = 0.95


@dataclass(frozen=True)
class Proposal:
    """`older` (the caller's id) is superseded by the newer text; `confidence` in 0..1; `reason`
    one human sentence; `evidence` JSON-able {"slot", "older_value", "newer_value", "words"}."""

    older: str
    confidence: float
    slot: str
    reason: str
    evidence: dict


def _confidence(claim: Claim) -> float:
    base = _BASE_FRAME if claim.slot.startswith("frame:") else _BASE_ATTRIBUTE
    return round(min(_MAX, base + (_CHANGE_BONUS if claim.change else 0.0)), 2)


def _reason(claim: Claim, older_value: str) -> str:
    if claim.slot.startswith("frame:"):
        what = f"'{claim.slot[6:]}'"
    else:
        owner, _, attribute = claim.slot.rpartition("|")
        what = f"{attribute} of {owner}" if owner else attribute
    cue = [w for w in claim.words if w not in claim.value.split()]
    said = f" ('{cue[0]}')" if cue else ""
    return f"{what} changed: {older_value} → {claim.value}{said}"


def propose(newer_text: str, held: Sequence[tuple[str, str]]) -> list[Proposal]:
    """Proposals for the held memories the newer text supersedes, at most one per older memory
    (the most confident), best first. For each slot only the most recent holder is compared: the
    same value is a paraphrase, a different value a supersession."""
    newer = read(newer_text)
    if not newer:
        return []
    held_claims = [(memory_id, {c.slot: (c, q) for c, q in read(text)}) for memory_id, text in held]
    best: dict[str, Proposal] = {}
    for claim, qualifier in newer:
        # The most recent holder of the slot that speaks of the same thing (one qualifier
        # containing the other): "token expiry" does not end "session expiry".
        holder = next(((mid, by_slot[claim.slot][0]) for mid, by_slot in held_claims
                       if claim.slot in by_slot and same_thing(qualifier, by_slot[claim.slot][1])),
                      None)
        if holder is None:
            continue
        older_id, older = holder
        if values.same_value(older.value, claim.value):
            continue
        proposal = Proposal(
            older=older_id,
            confidence=_confidence(claim),
            slot=claim.slot,
            reason=_reason(claim, older.value),
            evidence={"slot": claim.slot, "older_value": older.value, "newer_value": claim.value,
                      "words": list(claim.words)},
        )
        if older_id not in best or proposal.confidence > best[older_id].confidence:
            best[older_id] = proposal
    return sorted(best.values(), key=lambda p: -p.confidence)


def pairs_for(memories: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Predicted (newer_id, older_id) pairs over one namespace's memories in time order: each
    memory against the earlier ones sharing a slot key with it, most recent first."""
    keys = [set(slot_keys(text)) for _, text in memories]
    pairs = []
    for i, (memory_id, text) in enumerate(memories):
        held = [memories[j] for j in range(i - 1, -1, -1) if keys[j] & keys[i]]
        pairs += [(memory_id, p.older) for p in propose(text, held)]
    return pairs
