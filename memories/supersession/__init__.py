"""Supersession detection without a language model: which newer memory makes an older one of
the same namespace no longer true.

Pure (no Django, no Redis): `claims` reads what a text states as (slot, value) pairs, `detector`
compares a newer text's claims with the held memories' and proposes (newer supersedes older).
"""

from memories.supersession.claims import Claim, claims, slot_keys
from memories.supersession.detector import Proposal, pairs_for, propose

__all__ = ["Claim", "Proposal", "claims", "pairs_for", "propose", "slot_keys"]
