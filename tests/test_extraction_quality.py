"""The local extractor on LoCoMo dev: turn-level precision and recall of the candidates'
turns against the evidence turns of each session's ``observation`` facts (issue #29).

Pure (no database) except the last test, which loads one conversation through the API as a
user would and checks that the endpoint's figures are the pure ones.
"""

import datetime as dt
import json
import pathlib

import pytest

from operations.locomo import extraction_sessions, turn_prf
from sessions.formation.extraction import Turn, extract, parse_text

DATA = pathlib.Path("/work/shared/data/locomo_dev.json")
needs_data = pytest.mark.skipif(not DATA.exists(), reason="LoCoMo dev data not present")


def _load():
    return json.loads(DATA.read_text())


def _turns(session):
    return [Turn(seq=n, role=m["role"], content=m["content"], at=session["date"])
            for n, m in enumerate(session["messages"], start=1)]


def measure(samples, pick):
    """Micro-averaged turn P/R/F1; ``pick(session) -> set of seqs``."""
    selected = correct = gold = 0
    for sample in samples:
        for session in extraction_sessions(sample):
            chosen = pick(session)
            selected += len(chosen)
            correct += len(chosen & session["evidence"])
            gold += len(session["evidence"])
    return turn_prf(selected, correct, gold)


def local_pick(session):
    return {seq for c in extract(_turns(session)) for seq in c.seqs}


@needs_data
def test_baselines_as_the_issue_states():
    data = _load()
    every = measure(data, lambda s: set(range(1, len(s["messages"]) + 1)))
    assert round(every["precision"], 2) == 0.40 and every["recall"] == 1.0
    assert round(every["f1"], 2) == 0.57
    long = measure(data, lambda s: {n for n, m in enumerate(s["messages"], start=1)
                                    if len(m["content"]) > 80})
    assert round(long["f1"], 2) == 0.63  # "turns over 80 characters: F1 0.64" (0.634)


@needs_data
def test_local_extractor_meets_the_bar():
    m = measure(_load(), local_pick)
    assert m["precision"] >= 0.60, m
    assert m["f1"] >= 0.72, m


def test_candidates_stand_alone_with_speaker_date_and_provenance():
    at = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)
    turns = [
        Turn(1, "user", "Caroline: Hey Mel! Good to see you! How have you been?", at),
        Turn(2, "assistant", "Melanie: Hey Caroline! Good to see you! I'm swamped with the kids"
             " & work. What's up with you? Anything new?", at),
        Turn(3, "user", "Caroline: I went to a LGBTQ support group yesterday and it was so"
             " powerful.", at),
        Turn(4, "assistant", "Melanie: Wow, that's cool!", at),
        Turn(5, "user", "Caroline: What's your dog's name?", at),
        Turn(6, "system", "You are a helpful assistant. I went to Paris last year.", at),
    ]
    candidates = extract(turns)
    by_seq = {c.seqs[0]: c for c in candidates}
    assert 3 in by_seq
    assert by_seq[3].content == ("Caroline (8 May 2023): I went to a LGBTQ support group"
                                 " yesterday and it was so powerful.")
    assert by_seq[3].type == "long_term" and 0 <= by_seq[3].confidence <= 1
    # Never a bare question, greeting, acknowledgement or the system prompt.
    assert not {1, 4, 5, 6} & set(by_seq)


def test_parse_text_reads_a_transcript_or_a_note():
    turns = parse_text("Ana: I moved to Porto in June.\nBot: Nice! Why Porto?\n"
                       "Ana: My partner got a job there.\n")
    assert [(t.seq, t.role) for t in turns] == [(1, "user"), (2, "assistant"), (3, "user")]
    assert turns[2].content == "Ana: My partner got a job there."
    note = parse_text("Flight to Lisbon on 3 June. I am allergic to shellfish. Budget 6000 EUR.")
    assert [t.content for t in note] == ["Flight to Lisbon on 3 June.",
                                         "I am allergic to shellfish.", "Budget 6000 EUR."]


@needs_data
@pytest.mark.django_db
def test_the_extract_endpoint_gives_the_same_figures_on_one_conversation(builtins, api):
    sample = next(s for s in _load() if s["sample_id"] == "conv-26")
    api_counts = [0, 0, 0]
    for session in extraction_sessions(sample):
        session_id = f"conv-26/session_{session['session']}"
        assert api.post("/sessions", {"user_id": "conv-26", "session_id": session_id}
                        ).status_code == 201
        at = session["date"].isoformat()
        r = api.post(f"/sessions/{session_id}/messages", {"messages": [
            {"role": m["role"], "content": m["content"], "at": at}
            for m in session["messages"]]})
        assert r.status_code == 201, r.content
        body = api.post(f"/sessions/{session_id}/extract", {"dry_run": True}).json()
        assert body["method"] == "local"
        chosen = {seq for c in body["candidates"] for seq in c["seqs"]}
        api_counts[0] += len(chosen)
        api_counts[1] += len(chosen & session["evidence"])
        api_counts[2] += len(session["evidence"])
    assert turn_prf(*api_counts) == measure([sample], local_pick)
