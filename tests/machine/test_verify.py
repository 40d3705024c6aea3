"""`recipegen verify` against a real local HTTP server speaking the OpenAI API, right and wrong."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

GOOD_CHAT = {"role": "assistant", "reasoning_content": "17*23 is 391", "content": "391"}
GOOD_TOOL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
}
LEAKED = {"role": "assistant", "content": "17*23 is 391</think>391"}  # no reasoning parser
SWALLOWED = {"role": "assistant", "content": "", "tool_calls": None}  # wrong tool-call parser


def serve(chat: dict[str, Any], tool: dict[str, Any], model: str = "glm-5.2") -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                self._send(200, {})
            elif self.path == "/v1/models":
                self._send(200, {"data": [{"id": model}]})
            else:
                self._send(404, {})

        def do_POST(self) -> None:
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            msg = tool if "tools" in req else chat
            self._send(200, {"choices": [{"message": msg}]})

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def good() -> Iterator[str]:
    yield from serve(GOOD_CHAT, GOOD_TOOL)


@pytest.fixture
def broken() -> Iterator[str]:
    yield from serve(LEAKED, SWALLOWED)


def test_a_working_endpoint_passes_every_check(cli, good):
    r = cli("verify", "--url", good, "--model", "glm-5.2")
    assert r.code == 0, r.out + r.err
    assert [line.split()[:2] for line in r.out.splitlines()[:5]] == [
        ["PASS", "health"],
        ["PASS", "models"],
        ["PASS", "chat"],
        ["PASS", "reasoning"],
        ["PASS", "tools"],
    ]
    assert r.out.splitlines()[-1] == "all checks passed"


def test_the_two_silent_parser_failures_are_caught(cli, broken):
    r = cli("verify", "--url", broken, "--format", "json")
    assert r.code == 1
    checks = {c["check"]: c for c in r.json()["checks"]}
    assert checks["chat"]["ok"] and checks["models"]["ok"]
    assert not checks["reasoning"]["ok"] and "</think> leaked into content" in checks["reasoning"]["detail"]
    assert not checks["tools"]["ok"] and "tool-call parser swallowed the call" in checks["tools"]["detail"]
    assert r.err.startswith("error: verify: 2 check(s) failed") and r.err.count("\n") == 1


def test_a_model_the_server_does_not_list_fails(cli, good):
    r = cli("verify", "--url", good, "--model", "other-model", "--format", "json")
    assert r.code == 1
    models = next(c for c in r.json()["checks"] if c["check"] == "models")
    assert not models["ok"] and "other-model is not listed" in models["detail"]


def test_nothing_listening_fails_every_check_without_a_traceback(cli):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = cli("verify", "--url", f"http://127.0.0.1:{port}", "--model", "m")
    assert r.code == 1
    assert "FAIL  health" in r.out and "cannot connect" in r.out
    assert "Traceback" not in r.err


def test_a_bad_url_is_bad_input(cli):
    r = cli("verify", "--url", "localhost:8000")
    assert r.code == 2 and "is not an http(s) URL" in r.err
