"""A real local HTTP server speaking the OpenAI chat-completions protocol with scripted
answers (the only part of a language model the tests replace): ``llm_server`` starts it on
127.0.0.1 and points ``MEMORY_LLM_URL`` at it.

Each request takes the next step of ``server.script`` (the last step repeats): ``content``
(the answer's text), ``status`` (default 200), ``delay`` (seconds before answering),
``trickle`` (seconds between the bytes of the answer), ``raw`` (bytes sent as the body
instead of a chat completion: a malformed answer). ``server.requests`` holds each request's
JSON body and headers.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class ScriptedModel(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[dict] = [{"content": "ok"}]
        self.requests: list[dict] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_step(self) -> dict:
        with self.lock:
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802 - the http.server name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.server.requests.append({"path": self.path, "body": body,
                                     "headers": dict(self.headers)})
        step = self.server.next_step()
        time.sleep(step.get("delay", 0))
        raw = step.get("raw")
        if raw is None:
            raw = json.dumps({"id": "chatcmpl-test", "object": "chat.completion",
                              "model": body.get("model", ""),
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant",
                                                       "content": step.get("content", "")}}]}
                             ).encode()
        try:
            self.send_response(step.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            if step.get("trickle"):
                for i in range(len(raw)):
                    self.wfile.write(raw[i:i + 1])
                    self.wfile.flush()
                    time.sleep(step["trickle"])
            else:
                self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: what a timeout test wants


@pytest.fixture
def llm_server(settings):
    """A scripted model on 127.0.0.1; ``MEMORY_LLM_URL`` points at it (timeout 2 s)."""
    server = ScriptedModel()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.MEMORY_LLM_URL = server.url
    settings.MEMORY_LLM_MODEL = "scripted"
    settings.MEMORY_LLM_API_KEY = "sk-test"
    settings.MEMORY_LLM_TIMEOUT = 2
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
