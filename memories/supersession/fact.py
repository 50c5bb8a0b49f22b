"""A fact read from one clause: a slot key, a normalised value, and the topic's qualifier.

The qualifier is the full set of words (or, in Chinese, characters) naming a topic whose slot
key keeps only its head: "session expiry" and "token expiry" share the slot "expiry|value" so a
newer text naming just "expiry" finds either, yet the two are different settings. Two facts of
one slot are about the same thing only if one qualifier contains the other.
"""

from typing import NamedTuple


class Fact(NamedTuple):
    slot: str
    value: str
    qualifier: frozenset[str] = frozenset()


def same_thing(a: frozenset[str], b: frozenset[str]) -> bool:
    """True when one qualifier contains the other ('shared admin password' ⊇ 'admin password');
    an empty qualifier names nothing more than the slot."""
    return a <= b or b <= a
