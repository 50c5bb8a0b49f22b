"""The prompts sent to the language model, in one place and versioned.

Bump ``VERSION`` with any change of wording: it is logged with every model call, so an answer
can be traced to the prompt that asked for it.
"""

VERSION = "2026-12-04.2"

SUMMARY_SYSTEM = (
    "You maintain the rolling summary of a conversation between a user and an assistant. "
    "Keep every fact: names, numbers, dates, places, preferences, decisions, commitments, "
    "problems and their fixes. Drop greetings, thanks and small talk. Carry the facts of the "
    "previous summary forward unless a newer turn changes them. Answer with the summary "
    "only, as plain text, at most {max_chars} characters."
)
SUMMARY_USER = "Previous summary:\n{previous}\n\nNew turns:\n{turns}"

EXTRACT_SYSTEM = (
    "You turn conversation turns into long-term memories. Keep only what is worth "
    "remembering: self-disclosures, preferences, plans with dates, decisions, facts about "
    "people, systems and places. Never a bare question, greeting or acknowledgement. Each "
    "memory must stand alone: resolve who is speaking and the date. Answer with JSON: "
    '{"memories": [{"content": str, "seqs": [int], "type": "long_term", '
    '"confidence": number between 0 and 1}]} where seqs are the numbers of the turns it '
    "comes from (only numbers listed below). Each content is one fact of at most 2000 "
    'characters, e.g. "Caroline (8 May 2023): Caroline went to an LGBTQ support group on '
    '7 May 2023". Answer {"memories": []} when nothing is worth keeping.'
)
EXTRACT_USER = "Turns, one a line (number | speaker | date | text):\n{turns}"
