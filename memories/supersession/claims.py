"""What a text states: claims of (slot, value), read by rules without a language model.

Shapes: `claims(text) -> list[Claim]`, `slot_keys(text) -> list[str]`. A slot is
"<subject>|<attribute>" ("alice|residence", "ops-1024|assignee", "on-call"), a software version
"<name>@<environment>|version", or a statement frame "frame:<text with values masked>". Questions,
hedges and plans state nothing ("Does Chloe still live in Dublin?", "might move next year").
"""

from dataclasses import dataclass

from memories.supersession import cues, frames, rules_en, rules_zh

MAX_SLOT = 200


@dataclass(frozen=True)
class Claim:
    """One thing a text states: `slot` (<= 200 chars), its normalised `value`, the evidence
    `words` (value words then change words) and whether change words are present."""

    slot: str
    value: str
    words: tuple[str, ...]
    change: bool


def claims(text: str) -> list[Claim]:
    """The claims of a memory text, at most one per slot (the first clause stating it wins)."""
    if not text or not text.strip():
        return []
    changed = cues.change_words(text)
    facts: list[tuple[str, str]] = []
    if cues.is_chinese(text):
        carried = ""
        parts = cues.clauses(text)
        for clause in parts:
            facts += rules_zh.facts(clause, carried)
            carried = carried or rules_zh.subject(clause[:8])
        if parts and len(parts) > 1:
            facts += rules_zh.sentence_facts("，".join(parts))
    else:
        parts = cues.clauses(text)
        for clause in parts:
            facts += rules_en.facts(clause)
    for clause in parts:
        if stated := frames.frame(clause):
            facts.append(stated)
    out, seen = [], set()
    for slot, value in facts:
        slot = slot[:MAX_SLOT]
        if slot in seen:
            continue
        seen.add(slot)
        words = tuple(value.split()) + changed
        out.append(Claim(slot=slot, value=value, words=words, change=bool(changed)))
    return out


def slot_keys(text: str) -> list[str]:
    """The distinct slot keys of a text, in order (the product indexes these per memory)."""
    return [claim.slot for claim in claims(text)]
