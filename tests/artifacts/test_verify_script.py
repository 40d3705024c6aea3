"""verify.sh against a real HTTP server on loopback that answers like a correct, or a silently
misconfigured, OpenAI-compatible engine (seed 003's two fingerprints)."""

from __future__ import annotations

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

GOOD = {"content": "391", "reasoning_content": "17 × 23 = 340 + 51 = 391"}
LEAK = {"content": "17 × 23 … so the answer is 391.</think>391", "reasoning_content": None}
TOOL_OK = {
    "content": "",
    "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
    ],
}
TOOL_SWALLOWED = {"content": "", "tool_calls": None}


def serve(chat, tools):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, payload, status=200):
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/health":
                self._send({})
            elif self.path == "/v1/models":
                self._send({"data": [{"id": "glm-5.2"}]})
            else:
                self._send({"error": "not found"}, 404)

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            message = tools if "tools" in request else chat
            self._send(
                {"choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}]}
            )

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def verify_sh(tmp_path_factory):
    from tests.support.cli import run_cli

    out = tmp_path_factory.mktemp("v") / "glm"
    assert run_cli("--gpu", "sm80", "--model", "glm-5.2", "--out", str(out)).code == 0
    return out / "verify.sh"


def run_verify(verify_sh, chat, tools):
    server = serve(chat, tools)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        return subprocess.run(
            ["bash", str(verify_sh)],
            capture_output=True,
            text=True,
            timeout=60,
            env={"BASE_URL": url, "PATH": "/usr/bin:/bin:/usr/local/bin"},
        )
    finally:
        server.shutdown()


def test_correct_server_passes_every_check(verify_sh):
    proc = run_verify(verify_sh, GOOD, TOOL_OK)
    assert proc.returncode == 0, proc.stdout
    assert [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("PASS")] == [
        "health",
        "models",
        "chat",
        "reasoning",
        "tools",
    ]


def test_reasoning_leaking_into_content_fails(verify_sh):
    proc = run_verify(verify_sh, LEAK, TOOL_OK)
    assert proc.returncode == 1
    assert "FAIL  reasoning: a </think> leaked into content" in proc.stdout


def test_swallowed_tool_call_fails(verify_sh):
    proc = run_verify(verify_sh, GOOD, TOOL_SWALLOWED)
    assert proc.returncode == 1
    assert "FAIL  tools: tool_calls is null and content is empty" in proc.stdout


def test_unreachable_server_fails_once_for_its_one_cause(verify_sh):
    proc = subprocess.run(
        ["bash", str(verify_sh)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"BASE_URL": "http://127.0.0.1:9", "PATH": "/usr/bin:/bin:/usr/local/bin", "TIMEOUT": "5"},
    )
    assert proc.returncode == 1  # the health check failed; every other check would fail for the same cause
    assert proc.stdout.count("FAIL") == 1 and "FAIL  health" in proc.stdout
