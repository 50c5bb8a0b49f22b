"""The rolling summary where it runs: the fold (in the worker), the context answer, and
``POST /sessions/{id}/summarise`` (REST, MCP through the ``mcp`` SDK's client, the Python
client). The language model path is driven end to end by the scripted local model server
(tests/llm_server.py): the model answering (method ``llm``), timing out, answering 500 or
garbage (method ``local``: the fold still succeeds, within the timeout)."""

import time

import anyio
import pytest
from memory_console_client import MemoryConsole
from prometheus_client import REGISTRY

from accounts.tokens import token_create
from sessions import services as sessions
from sessions.formation import prompts
from sessions.models import Session
from tests.conftest import work
from tests.llm_server import llm_server  # noqa: F401 - the fixture
from tests.test_client import FAST, make_token
from tests.test_mcp import http_client
from tests.test_summary_quality import OPENING, chatter

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues")]

SYSTEM_PROMPT = "You are Atlas, a travel agent bot. Secret instruction: upsell cruises."
TURNS = [
    {"role": "system", "content": "Reminder to the bot: never mention competitors."},
    {"role": "user", "content": "Hello!"},
    {"role": "user", "content": "My name is Ana Ferreira and I'm planning a trip to Lisbon "
                                "and Porto in June."},
    {"role": "assistant", "content": "Great, thanks!"},
    {"role": "user", "content": "I have a severe shellfish allergy."},
    {"role": "user", "content": "My total budget is €6,000 for the whole trip."},
    {"role": "assistant", "content": "Noted. I will find shellfish-free restaurants."},
    {"role": "user", "content": "Which hotel do you suggest?"},
    {"role": "assistant", "content": "Casa Alfama, 120 euros a night."},
]
MODEL_SUMMARY = "Ana Ferreira plans Lisbon and Porto in June; shellfish allergy; budget €6,000."


def llm_calls(outcome: str) -> float:
    return REGISTRY.get_sample_value("memory_console_llm_call_duration_seconds_count",
                                     {"purpose": "summary", "outcome": outcome}) or 0.0


def session_with_turns(session_id="trip-1", user_id="ana"):
    sessions.session_create(user_id=user_id, session_id=session_id, ttl_seconds=600,
                            system_prompt=SYSTEM_PROMPT)
    sessions.session_append(session_id=session_id, messages=TURNS)
    return session_id


def assert_facts(summary: str):
    for fact in ("Ana Ferreira", "Lisbon", "June", "shellfish allergy", "€6,000"):
        assert fact in summary, (fact, summary)


def test_without_a_model_the_fold_writes_the_local_summary(builtins, settings, api):
    settings.MEMORY_LLM_URL = ""
    session_id = session_with_turns()
    assert sessions.session_fold(session_id=session_id, keep=2)["method"] == "local"
    session = Session.objects.get(pk=session_id)
    assert session.summary_method == "local" and session.summary_upto_seq == 7
    assert_facts(session.summary)
    for left_out in ("Atlas", "upsell", "competitors", "Hello", "Great, thanks", "Noted"):
        assert left_out not in session.summary
    context = api.get(f"/sessions/{session_id}/context").json()
    assert context["summary"] == session.summary and context["summary_method"] == "local"
    assert [m["seq"] for m in context["messages"]] == [8, 9]  # promote takes these
    assert api.get(f"/sessions/{session_id}").json()["summary_method"] == "local"


def test_with_a_model_the_fold_writes_its_summary(builtins, llm_server):  # noqa: F811
    llm_server.script = [{"content": f"  {MODEL_SUMMARY}\n"}]
    session_id = session_with_turns()
    before = llm_calls("ok")
    assert sessions.session_fold(session_id=session_id, keep=2)["method"] == "llm"
    session = Session.objects.get(pk=session_id)
    assert session.summary == MODEL_SUMMARY and session.summary_method == "llm"
    assert llm_calls("ok") == before + 1
    [request] = llm_server.requests
    system, user = request["body"]["messages"]
    assert system == {"role": "system",
                      "content": prompts.SUMMARY_SYSTEM.format(max_chars=sessions.SUMMARY_CHARS)}
    assert user["content"].startswith("Previous summary:\n(none)\n\nNew turns:\n")
    assert "user: I have a severe shellfish allergy." in user["content"]
    assert "Atlas" not in user["content"] and "competitors" not in user["content"]
    assert "Casa Alfama" not in user["content"]  # kept in the window, not folded

    # The next fold sends the previous summary with the turns folded since.
    llm_server.script = [{"content": MODEL_SUMMARY + " Hotel: Casa Alfama."}]
    sessions.session_append(session_id=session_id, messages=[
        {"role": "user", "content": "Book it for 3 nights."}])
    sessions.session_fold(session_id=session_id, keep=0)
    assert llm_server.requests[-1]["body"]["messages"][1]["content"].startswith(
        f"Previous summary:\n{MODEL_SUMMARY}\n\nNew turns:\nuser: Which hotel")


@pytest.mark.parametrize("step,outcome", [
    ({"delay": 3}, "timeout"),
    ({"status": 500, "raw": b"x"}, "error"),
    ({"raw": b"<html>not a completion</html>"}, "error"),
    ({"content": "   \n"}, "invalid"),
], ids=["timeout", "500", "garbage", "blank"])
def test_a_model_that_fails_falls_back_to_the_local_summary(builtins, settings, llm_server,  # noqa: F811
                                                            step, outcome):
    settings.MEMORY_LLM_TIMEOUT = 1
    llm_server.script = [step]
    session_id = session_with_turns()
    before = llm_calls(outcome)
    started = time.monotonic()
    result = sessions.session_fold(session_id=session_id, keep=2)
    assert time.monotonic() - started < 2.5  # the timeout bounds the model, retry included
    assert result["method"] == "local" and result["folded"] == 7
    session = Session.objects.get(pk=session_id)
    assert session.summary_method == "local" and session.summary_upto_seq == 7
    assert_facts(session.summary)
    assert llm_calls(outcome) == before + 1


def test_the_summarise_endpoint_reads_the_whole_session_both_ways(builtins, settings,
                                                                  viewer_api, llm_server):  # noqa: F811
    session_id = session_with_turns()
    settings.MEMORY_LLM_URL = ""
    body = viewer_api.post(f"/sessions/{session_id}/summarise", {}).json()
    assert body["method"] == "local" and body["chars"] == len(body["summary"]) <= 2000
    assert_facts(body["summary"])
    short = viewer_api.post(f"/sessions/{session_id}/summarise", {"max_chars": 120}).json()
    assert 0 < short["chars"] <= 120
    session = Session.objects.get(pk=session_id)
    assert session.summary == "" and session.summary_upto_seq == 0  # read-only

    settings.MEMORY_LLM_URL = llm_server.url
    llm_server.script = [{"content": MODEL_SUMMARY}]
    answer = viewer_api.post(f"/sessions/{session_id}/summarise").json()
    assert answer == {"summary": MODEL_SUMMARY, "method": "llm", "chars": len(MODEL_SUMMARY)}
    assert "Casa Alfama" in llm_server.requests[-1]["body"]["messages"][1]["content"]
    assert Session.objects.get(pk=session_id).summary == ""

    bad = viewer_api.post(f"/sessions/{session_id}/summarise", {"max_chars": 5})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "max_chars"
    assert viewer_api.post("/sessions/nope/summarise", {}).status_code == 404


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_a_205_turn_session_folded_by_the_worker_keeps_its_opening_facts(builtins, settings,
                                                                         api):
    settings.MEMORY_LLM_URL = ""
    assert api.post("/sessions", {"user_id": "ana", "session_id": "long-1"}).status_code == 201
    conversation = OPENING + chatter(205 - len(OPENING))
    for at in range(0, len(conversation), 25):
        response = api.post("/sessions/long-1/messages", {"messages": [
            {"role": role, "content": text} for role, text in conversation[at:at + 25]]})
        assert response.status_code == 201
        work()  # the worker folds whenever the window is over budget
    session = Session.objects.get(pk="long-1")
    assert session.summary_upto_seq > 0 and session.summary_method == "local"
    context = api.get("/sessions/long-1/context").json()
    assert len(context["summary"]) <= 2000
    assert_facts(context["summary"])
    seqs = [m["seq"] for m in context["messages"]]
    assert seqs == list(range(186, 206)) and seqs[0] > session.summary_upto_seq


def test_mcp_summarise_session(builtins, settings, live_server, editor):
    settings.MEMORY_LLM_URL = ""
    session_id = session_with_turns()
    token = token_create(user=editor)

    async def steps():
        async with http_client(live_server, token) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            whole = await client.call_tool("summarise_session", {"session_id": session_id})
            short = await client.call_tool("summarise_session", {"session_id": session_id,
                                                                 "max_chars": 150})
            missing = await client.call_tool("summarise_session", {"session_id": "nope"})
            context = await client.call_tool("get_context", {"session_id": session_id,
                                                             "last": 2})
            return tools, whole, short, missing, context

    tools, whole, short, missing, context = anyio.run(steps)
    assert tools["summarise_session"].annotations.read_only_hint is True
    body = whole.structured_content
    assert body["method"] == "local" and body["chars"] == len(body["summary"])
    assert_facts(body["summary"])
    assert short.structured_content["chars"] <= 150
    assert missing.is_error and missing.structured_content["status"] == 404
    assert [m["seq"] for m in context.structured_content["messages"]] == [8, 9]


def test_the_python_client_summarises(live_server, builtins, settings):
    settings.MEMORY_LLM_URL = ""
    session_with_turns(user_id="carol")
    with MemoryConsole(live_server.url, make_token("sum-viewer", "viewer"), retry=FAST) as c:
        summary = c.summarise("trip-1")
        assert summary.method == "local" and summary.chars == len(summary.summary)
        assert_facts(summary.summary)
        assert c.summarise("trip-1", max_chars=150).chars <= 150
        assert [m.seq for m in c.context("trip-1", last=2).messages] == [8, 9]
