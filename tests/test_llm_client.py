"""The language model client against a real local server speaking the chat-completions
protocol: answers, JSON validation, the whole call bounded by MEMORY_LLM_TIMEOUT, one retry,
and every outcome counted."""

import time

import pytest
from prometheus_client import REGISTRY

from sessions.formation import llm
from tests.llm_server import llm_server  # noqa: F401 - the fixture

ASK = [{"role": "user", "content": "hello"}]


def calls(outcome: str, purpose: str = "summary") -> float:
    return REGISTRY.get_sample_value("memory_console_llm_call_duration_seconds_count",
                                     {"purpose": purpose, "outcome": outcome}) or 0.0


def test_it_answers_with_the_models_text_and_sends_the_protocols_request(llm_server):  # noqa: F811
    llm_server.script = [{"content": "a summary"}]
    before = calls("ok")
    assert llm.chat(ASK, purpose="summary") == "a summary"
    [request] = llm_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "scripted" and request["body"]["messages"] == ASK
    assert request["body"]["temperature"] == 0
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert calls("ok") == before + 1


def test_no_url_means_no_model(settings):
    settings.MEMORY_LLM_URL = ""
    assert not llm.configured()
    with pytest.raises(llm.ModelUnavailable) as exc:
        llm.chat(ASK, purpose="summary")
    assert exc.value.reason == "off"


def test_a_json_answer_is_parsed_validated_and_unfenced(llm_server):  # noqa: F811
    llm_server.script = [{"content": '```json\n{"memories": []}\n```'},
                         {"content": '{"memories": "nope"}'},
                         {"content": "not json at all"}]

    def shape(value):
        if not isinstance(value["memories"], list):
            raise ValueError("memories must be a list")
        return value["memories"]

    assert llm.chat_json(ASK, purpose="extraction", validate=shape) == []
    assert llm_server.requests[0]["body"]["response_format"] == {"type": "json_object"}
    before = calls("invalid", "extraction")
    for _ in range(2):
        with pytest.raises(llm.ModelUnavailable) as exc:
            llm.chat_json(ASK, purpose="extraction", validate=shape)
        assert exc.value.reason == "invalid"
    assert calls("invalid", "extraction") == before + 2


@pytest.mark.parametrize("step", [{"delay": 5, "content": "late"},
                                  {"trickle": 0.2, "content": "x" * 40}])
def test_a_slow_or_trickling_model_is_given_up_at_the_timeout(llm_server, step):  # noqa: F811
    llm_server.script = [step]
    started = time.monotonic()
    with pytest.raises(llm.ModelUnavailable) as exc:
        llm.chat(ASK, purpose="summary")
    assert exc.value.reason == "timeout"
    assert time.monotonic() - started < 3.5  # MEMORY_LLM_TIMEOUT = 2, retries included


def test_one_retry_after_a_server_error_then_an_error(llm_server):  # noqa: F811
    llm_server.script = [{"status": 503, "raw": b"{}"}, {"content": "second try"}]
    assert llm.chat(ASK, purpose="summary") == "second try"
    llm_server.script = [{"status": 500, "raw": b"oops"}]
    with pytest.raises(llm.ModelUnavailable) as exc:
        llm.chat(ASK, purpose="summary")
    assert exc.value.reason == "error" and "500" in str(exc.value)
    llm_server.script = [{"status": 401, "raw": b'{"error": "bad key"}'}]
    with pytest.raises(llm.ModelUnavailable):
        llm.chat(ASK, purpose="summary")
    assert len(llm_server.requests) == 2 + 2 + 1  # a 4xx is not retried


@pytest.mark.parametrize("raw", [b"<html>gateway</html>", b'{"choices": []}',
                                 b'{"choices": [{"message": {"content": null}}]}'])
def test_an_answer_not_shaped_as_the_protocol_is_an_error(llm_server, raw):  # noqa: F811
    llm_server.script = [{"raw": raw}]
    with pytest.raises(llm.ModelUnavailable) as exc:
        llm.chat(ASK, purpose="summary")
    assert exc.value.reason == "error"
