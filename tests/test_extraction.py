"""Memories drawn from conversations (issue #29): the extract endpoint (dry run and write),
``infer`` on POST /memories, promote with edits, extraction on fold, and the language model
path driven end to end by the scripted local model server (its answer used when valid; a
timeout, an error, malformed JSON or unknown seqs fall back to the local extractor)."""

import json
import time

import pytest

from memories.models import Memory
from sessions import jobs as session_jobs
from sessions import services as sessions
from tests.llm_server import llm_server  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db

CHAT = [
    ("user", "Ana: Hi there!"),
    ("assistant", "Bot: Hello Ana, how can I help today?"),
    ("user", "Ana: I moved to Porto last month with my partner, who got a job at a bank."),
    ("assistant", "Bot: That sounds exciting! How do you like the city so far?"),
    ("user", "Ana: I love it, and I'm planning a trip to Lisbon in June with my sister."),
    ("assistant", "Bot: Great."),
    ("user", "Ana: What's my dog's name?"),
]


def load(api, session_id="s-x", user_id="u-a", chat=CHAT):
    assert api.post("/sessions", {"user_id": user_id, "session_id": session_id}).status_code == 201
    r = api.post(f"/sessions/{session_id}/messages", {"messages": [
        {"role": role, "content": text, "at": "2023-05-08T13:56:00+00:00"}
        for role, text in chat]})
    assert r.status_code == 201, r.content


def test_dry_run_answers_candidates_and_writes_nothing(builtins, api, viewer_api):
    load(api)
    r = viewer_api.post("/sessions/s-x/extract", {"dry_run": True})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["method"] == "local" and "memory_ids" not in body
    seqs = [c["seqs"] for c in body["candidates"]]
    assert [3] in seqs and [5] in seqs
    assert not {1, 2, 6, 7} & {s for c in seqs for s in c}  # greetings, acks, questions
    first = body["candidates"][0]
    assert first["content"].startswith("Ana (8 May 2023): I moved to Porto")
    assert first["type"] == "long_term" and 0 <= first["confidence"] <= 1
    assert Memory.objects.count() == 0
    assert viewer_api.post("/sessions/s-x/extract", {"dry_run": False}).status_code == 403


def test_writing_them_goes_through_the_write_path_and_dedups(builtins, api):
    load(api)
    r = api.post("/sessions/s-x/extract", {"dry_run": False})
    assert r.status_code == 200, r.content
    body = r.json()
    assert len(body["memory_ids"]) == len(body["candidates"]) >= 2
    rows = {m.memory_id: m for m in Memory.objects.filter(memory_id__in=body["memory_ids"])}
    for memory_id, cand in zip(body["memory_ids"], body["candidates"], strict=True):
        m = rows[memory_id]
        assert m.user_id == "u-a" and m.conversation_id == "s-x" and m.content == cand["content"]
        assert m.metadata["source"] == {"session_id": "s-x", "seqs": cand["seqs"]}
        assert m.created_at.year == 2023
    # Searchable, and a second run is deduplicated (same ids, nothing new).
    hits = api.post("/recall", {"user_id": "u-a", "query": "Porto partner bank"}).json()
    assert hits["results"][0]["memory_id"] == body["memory_ids"][0]
    again = api.post("/sessions/s-x/extract", {"dry_run": False}).json()
    assert again["memory_ids"] == body["memory_ids"]
    assert Memory.objects.count() == len(body["memory_ids"])


def test_unknown_session_is_404(builtins, api):
    assert api.post("/sessions/nope/extract", {}).status_code == 404


def test_infer_writes_the_extracted_memories_not_the_text(builtins, api):
    transcript = "\n".join(text for _, text in CHAT)
    r = api.post("/memories", {"user_id": "u-a", "content": transcript, "infer": True,
                               "tags": ["chat"]})
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["inferred"] is True and body["method"] == "local"
    contents = [m["content"] for m in body["memories"]]
    assert any("moved to Porto" in c for c in contents)
    assert not any("dog's name" in c or "Hi there" in c for c in contents)
    assert all(m["tags"] == ["chat"] and m["user_id"] == "u-a" for m in body["memories"])
    assert not Memory.objects.filter(content=transcript).exists()
    note = api.post("/memories", {"user_id": "u-a", "infer": True, "content":
                                  "Flight to Lisbon on 3 June. I am allergic to shellfish. "
                                  "Thanks!"}).json()
    assert [m["content"] for m in note["memories"]] == ["Flight to Lisbon on 3 June.",
                                                        "I am allergic to shellfish."]
    # Without infer the text is one memory, as before.
    plain = api.post("/memories", {"user_id": "u-a", "content": "Ana: plain"})
    assert plain.status_code == 201 and plain.json()["content"] == "Ana: plain"
    assert api.post("/memories", {"user_id": "u-a", "content": " ", "infer": True}
                    ).status_code == 400


def test_promote_edits_text_type_and_importance(builtins, api):
    load(api)
    r = api.post("/sessions/s-x/messages/3/promote", {
        "content": "Ana moved to Porto in April 2023", "type": "short_term",
        "importance": 0.9})
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["content"] == "Ana moved to Porto in April 2023"
    assert body["type"] == "short_term" and body["importance"] == 0.9
    assert body["metadata"]["promoted_from"] == {"session_id": "s-x", "seq": 3}
    plain = api.post("/sessions/s-x/messages/5/promote", {}).json()
    assert plain["content"] == CHAT[4][1] and plain["type"] == "long_term"
    assert api.post("/sessions/s-x/messages/5/promote", {"type": "nope"}).status_code == 400


def test_extract_on_fold_enqueues_a_job_for_the_folded_turns(builtins, api, settings,
                                                             monkeypatch):
    load(api)
    asked = []
    monkeypatch.setattr(sessions.job_queue, "enqueue",
                        lambda func, *args, **kw: asked.append((func, args, kw)) or "job_x")
    settings.MEMORY_EXTRACT_ON_FOLD = False
    sessions.session_fold(session_id="s-x", keep=5)
    assert not [a for a in asked if a[0] == "sessions.jobs.session_extract_job"]
    settings.MEMORY_EXTRACT_ON_FOLD = True
    sessions.session_fold(session_id="s-x", keep=2)
    [job] = [a for a in asked if a[0] == "sessions.jobs.session_extract_job"]
    assert job[1] == ("s-x", 3, 5) and job[2]["queue"] == "default"
    # The job writes what those turns hold.
    done = session_jobs.session_extract_job("s-x", 3, 5)
    assert done["memories"] >= 1
    assert all(3 <= s <= 5 for m in Memory.objects.all() for s in m.metadata["source"]["seqs"])
    assert session_jobs.session_extract_job("gone", 1, 2) == {"memories": 0, "method": ""}


# The language model path, end to end against the scripted local server.

def model_answer(memories):
    return {"content": json.dumps({"memories": memories})}


def test_the_models_candidates_are_used_when_valid(builtins, api, llm_server):  # noqa: F811
    load(api)
    llm_server.script = [model_answer([
        {"content": "Ana moved to Porto in April 2023 with her partner", "seqs": [3],
         "type": "long_term", "confidence": 0.9}])]
    body = api.post("/sessions/s-x/extract", {"dry_run": False}).json()
    assert body["method"] == "llm"
    assert body["candidates"] == [{"content": "Ana moved to Porto in April 2023 with her partner",
                                   "seqs": [3], "type": "long_term", "confidence": 0.9}]
    m = Memory.objects.get(memory_id=body["memory_ids"][0])
    assert m.metadata["source"] == {"session_id": "s-x", "seqs": [3]}
    [request] = llm_server.requests
    prompt = request["body"]["messages"][1]["content"]
    assert "3 | Ana | 8 May 2023 | I moved to Porto" in prompt
    # infer asks the model too.
    llm_server.script = [model_answer([{"content": "Ana likes Porto", "seqs": [1]}])]
    r = api.post("/memories", {"user_id": "u-a", "infer": True,
                               "content": "Ana: I like Porto.\nBot: Nice."}).json()
    assert r["method"] == "llm" and [m["content"] for m in r["memories"]] == ["Ana likes Porto"]


@pytest.mark.parametrize("step", [
    {"delay": 5},                                                    # timeout
    {"status": 500},                                                 # an error (retried)
    {"raw": b"garbage"},                                             # not a completion
    {"content": "{not json"},                                        # malformed JSON
    {"content": '{"memories": [{"content": "x", "seqs": [99]}]}'},   # unknown seq
    {"content": '{"memories": [{"content": "x", "seqs": [6]}]}'.replace("6", "3")
     .replace('"x"', '""')},                                         # empty content
    {"content": '{"memories": [{"content": "x", "seqs": ["3"]}]}'},  # seqs not integers
    {"content": '{"facts": []}'},                                    # wrong shape
])
def test_any_model_failure_falls_back_to_local_in_time(builtins, api, llm_server,  # noqa: F811
                                                       settings, step):
    load(api)
    llm_server.script = [step]
    started = time.monotonic()
    r = api.post("/sessions/s-x/extract", {"dry_run": True})
    elapsed = time.monotonic() - started
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["method"] == "local"
    assert [3] in [c["seqs"] for c in body["candidates"]]
    assert elapsed < settings.MEMORY_LLM_TIMEOUT + 1.5
    assert llm_server.requests  # the model was asked
