"""First person in dialogue memories: "Caroline: I moved to Denver" states Caroline's residence.

A text "<Name>: <utterance>" (the form of stored conversation turns) is read with the speaker's
name for "I", "I'm", "I've" and "my" at the start of each clause; other texts are unchanged.
"""

import re

_SPEAKER = re.compile(r"^(?P<name>[A-Z][\w'-]{1,30}):\s+(?P<said>.+)$", re.S)
_FIRST_PERSON = (
    (re.compile(r"^I'm\b|^I am\b"), "{name} is"),
    (re.compile(r"^I've\b|^I have\b"), "{name} has"),
    (re.compile(r"^I\b"), "{name}"),
    (re.compile(r"^[Mm]y\b"), "{name}'s"),
)


def split(text: str) -> tuple[str, str]:
    """('Caroline', 'I moved to Denver.') for a dialogue turn, ('', text) otherwise."""
    match = _SPEAKER.match(text)
    return (match.group("name"), match.group("said")) if match else ("", text)


def third_person(clause: str, name: str) -> str:
    """'I moved to Denver' -> 'Caroline moved to Denver' (clause start only)."""
    if not name:
        return clause
    for pattern, replacement in _FIRST_PERSON:
        if pattern.match(clause):
            return pattern.sub(replacement.format(name=name), clause, count=1)
    return clause
