"""What a text states: claims of (slot, value), read by rules without a language model.

Shapes: `claims(text) -> list[Claim]`, `slot_keys(text) -> list[str]`. A slot is
"<subject>|<attribute>" ("alice|residence", "ops-1024|assignee", "on-call"), a software version
"<name>@<environment>|version", a configuration topic by its head noun ("timeout|value"), or a
statement frame "frame:<text with values masked>". Questions, hedges and plans state nothing
("Does Chloe still live in Dublin?", "might move next year", "考虑明年搬家").
"""

from dataclasses import dataclass

from memories.supersession import cues, frames, rules_en, rules_zh, speaker
from memories.supersession.fact import Fact

MAX_SLOT = 200


@dataclass(frozen=True)
class Claim:
    """One thing a text states: `slot` (<= 200 chars), its normalised `value`, the evidence
    `words` (value words then change words) and whether change words are present."""

    slot: str
    value: str
    words: tuple[str, ...]
    change: bool


def read(text: str) -> list[tuple[Claim, frozenset[str]]]:
    """Each claim with its topic qualifier (see `fact.Fact`), at most one per slot: the first
    clause stating a slot wins. The detector needs the qualifiers; callers need only `claims`."""
    if not text or not text.strip():
        return []
    found: list[Fact] = []
    if cues.is_chinese(text):
        parts = cues.clauses(text)
        carried, present = "", rules_zh.gates(text)
        for clause in parts:
            found += rules_zh.facts(clause, carried, present)
            # A later clause without a subject ("现在住在昆明") is about the first one's.
            carried = carried or rules_zh.subject(clause[:8])
        if len(parts) > 1:
            found += rules_zh.sentence_facts("，".join(parts))
    else:
        name, said = speaker.split(text)
        parts = [speaker.third_person(clause, name) for clause in cues.clauses(said)]
        gates = rules_en.Gates(said.lower())
        for clause in parts:
            found += rules_en.facts(clause, gates)
    found += [fact for fact in map(frames.frame, parts) if fact]
    changed = cues.change_words(text)
    out, seen = [], set()
    for fact in found:
        slot = fact.slot[:MAX_SLOT]
        if slot in seen:
            continue
        seen.add(slot)
        claim = Claim(slot=slot, value=fact.value, words=tuple(fact.value.split()) + changed,
                      change=bool(changed))
        out.append((claim, fact.qualifier))
    return out


def claims(text: str) -> list[Claim]:
    """The claims of a memory text; [] for questions, hedges and plans."""
    return [claim for claim, _ in read(text)]


def slot_keys(text: str) -> list[str]:
    """The distinct slot keys of a text, in order (the product indexes these per memory)."""
    return [claim.slot for claim, _ in read(text)]
